/**
 * What a Cairn server does once, before it answers a request: check the
 * configuration (a bad one stops the start with a clear message), settle the
 * sign-in secret, and open the database early, because a fresh embedded folder
 * takes seconds to create and migrate.
 */
import { resolveAuthSecret } from "./auth-secret";
import { getDatabaseHandle } from "./db/client";
import { env } from "./env";

export async function startCairn(): Promise<void> {
  const config = env();
  process.env.AUTH_SECRET = resolveAuthSecret(config);
  await getDatabaseHandle();
}
