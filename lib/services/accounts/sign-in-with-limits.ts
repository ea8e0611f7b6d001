/**
 * Sign-in with attempt limits. Nobody is signed in yet, so it takes the
 * database, the credentials, and the caller (the address its limits count), not
 * a ServiceContext. The attempt is counted against the e-mail and the client
 * address first (one statement), and refused there, before any password is
 * hashed, when either is over its limit. A refusal is the same whether or not
 * the e-mail has an account. Success clears the e-mail's counter.
 */
import "server-only";
import type { Database } from "../../db/client";
import { accountKey, clearAttempts, passwordAttemptKeys, registerAttempt } from "./attempt-limits";
import { type Credentials, type CredentialsCheck, checkCredentials } from "./check-credentials";

export type SignInOutcome = CredentialsCheck | { kind: "too_many_attempts"; retryAt: Date };

export async function signInWithLimits(
  db: Database,
  credentials: Credentials,
  caller: { address: string; now?: Date },
): Promise<SignInOutcome> {
  const gate = await registerAttempt(
    db,
    passwordAttemptKeys(credentials.email, caller.address),
    caller.now,
  );
  if (!gate.allowed) return { kind: "too_many_attempts", retryAt: gate.retryAt };
  const checked = await checkCredentials(db, credentials);
  if (checked.kind !== "invalid") await clearAttempts(db, accountKey(credentials.email));
  return checked;
}
