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

/**
 * For the server: a process that cannot reach its database or lacks its
 * configuration must not stay up answering every request with an error, so it
 * stops with the reason.
 */
export async function startCairnOrExit(): Promise<void> {
  try {
    await startCairn();
  } catch (error) {
    console.error(`Cairn cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
