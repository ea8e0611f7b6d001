/**
 * What a Cairn server does once, before it answers a request: stamp requests with
 * their connection's address (for the sign-in limits), check the configuration
 * (a bad one stops the start with a clear message), settle the sign-in secret,
 * open the database early, because a fresh embedded folder takes seconds to
 * create and migrate, on a fresh install print a one-time setup code, and start
 * the review deadline timer (docs/reviews.md) and the notification dispatcher's
 * timer (docs/notifications.md).
 */
import { resolveAuthSecret } from "./auth-secret";
import { type Database, getDatabaseHandle } from "./db/client";
import { env } from "./env";
import { logWarning, maskQueriesInConsole, messageForLog } from "./log";
import { deleteStaleClients } from "./oauth/clients";
import { installPeerAddressHeader } from "./peer-address";
import { isAppError } from "./plan-engine/app-error";
import { hasAnyUser } from "./services/accounts/has-any-user";
import { issueSetupCode, setupCodeAnnouncement } from "./services/accounts/setup-codes";
import { auditKeyring } from "./services/audit/audit-key";
import { headSigner } from "./services/audit/sign-heads";
import { startNotifier } from "./services/notifications/runtime";
import { startReviewScheduler } from "./services/reviews/review-scheduler";
import { publicBaseUrl } from "./services/shared/public-url";

export async function startCairn(): Promise<void> {
  maskQueriesInConsole();
  installPeerAddressHeader();
  const config = env();
  process.env.AUTH_SECRET = resolveAuthSecret(config);
  // The key that signs audit heads, settled before any decision needs it.
  auditKeyring();
  const { db } = await getDatabaseHandle();
  await announceSetupCode(db);
  const signHeads = headSigner(config.CAIRN_AUDIT_SIGN_INTERVAL_MS);
  startReviewScheduler(
    async () => (await getDatabaseHandle()).db,
    {
      stallThresholdSeconds: config.CAIRN_STALL_THRESHOLD_SECONDS,
      stepLeaseSeconds: config.CAIRN_STEP_LEASE_SECONDS,
    },
    config.CAIRN_SCHEDULER_INTERVAL_MS,
    async (database) => {
      // Registration is open to anyone: clients nobody connected with go (docs/oauth.md).
      await deleteStaleClients(database, new Date());
      await signHeads(database);
    },
  );
  startNotifier(db);
}

/**
 * On a fresh install, a new setup code in the log. A database that cannot answer
 * yet (a server database not migrated, or unreachable) does not stop the start:
 * every request would report it anyway, and the CLI can print a code later.
 */
async function announceSetupCode(db: Database): Promise<void> {
  try {
    if (await hasAnyUser(db)) return;
    console.log(setupCodeAnnouncement(await issueSetupCode(db), publicBaseUrl()));
  } catch (error) {
    // CONFLICT: another instance finished the set-up in between; nothing to print.
    if (isAppError(error) && error.code === "CONFLICT") return;
    logWarning(
      "Cairn: could not check for a fresh install to print a setup code; `npm run cairn -- setup-code` prints one",
      error,
    );
  }
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
    console.error(`Cairn cannot start: ${messageForLog(error)}`);
    process.exit(1);
  }
}
