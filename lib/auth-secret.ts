/**
 * AUTH_SECRET signs session cookies. On the embedded default Cairn makes one on
 * first start and keeps it in the data folder, so `npm start` works with no
 * set-up and sessions survive restarts. A server database in production means a
 * real deployment, possibly several instances: there the secret must be given,
 * since instances cannot share a file.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, type Env } from "./env";

export const AUTH_SECRET_FILE = "auth-secret";

export function resolveAuthSecret(config: Env): string {
  if (config.AUTH_SECRET) return config.AUTH_SECRET;
  if (config.DATABASE_URL && config.NODE_ENV === "production") {
    throw new ConfigError(
      "AUTH_SECRET is required when DATABASE_URL is set in production: every instance must sign sessions with the same secret. " +
        "Generate one with `openssl rand -base64 32` and set it in the environment.",
    );
  }
  const folder = resolve(config.CAIRN_DATA_DIR);
  const file = join(folder, AUTH_SECRET_FILE);
  try {
    const stored = readFileSync(file, "utf8").trim();
    if (stored.length >= 32) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  mkdirSync(folder, { recursive: true });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
