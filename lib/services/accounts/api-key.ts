/**
 * API keys are 256 bits of randomness with a recognisable prefix. Only the
 * SHA-256 of a key is stored: with that much entropy a slow hash adds nothing,
 * and a fast one lets every MCP request find its key with one indexed lookup.
 */
import { createHash, randomBytes } from "node:crypto";

export const API_KEY_PREFIX = "cairn_";

export function generateApiKey(): { key: string; keyPrefix: string; keyHash: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString("base64url")}`;
  return { key, keyPrefix: key.slice(0, API_KEY_PREFIX.length + 6), keyHash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}
