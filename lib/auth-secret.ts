/**
 * AUTH_SECRET signs session cookies. On the embedded default Cairn makes one on
 * first start and keeps it in the data folder, so `npm start` works with no
 * set-up and sessions survive restarts. A server database in production means a
 * real deployment, possibly several instances: there the secret must be given,
 * since instances cannot share a file.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRIVATE_FILE_MODE, preparePrivateDataDir, tightenPermissions } from "./db/data-dir";
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
  // Anyone who reads the secret can forge a session for any user.
  const folder = preparePrivateDataDir(config.CAIRN_DATA_DIR);
  const file = join(folder, AUTH_SECRET_FILE);
  try {
    const stored = readFileSync(file, "utf8").trim();
    if (stored.length >= 32) {
      tightenPermissions(file, PRIVATE_FILE_MODE);
      return stored;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secret = randomBytes(32).toString("base64url");
  // A mode applies only to a new file: a too-short one is removed, not rewritten.
  rmSync(file, { force: true });
  writeFileSync(file, `${secret}\n`, { mode: PRIVATE_FILE_MODE, flag: "wx" });
  return secret;
}
