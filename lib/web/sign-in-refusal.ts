/** What a refused sign-in says; none of it reveals whether the e-mail has an account. */
import { tryAgainIn } from "../services/accounts/attempt-limits";

export function signInRefusal(code: string | undefined, retryAt?: Date): string {
  if (code === "too_many_attempts") {
    return `Too many sign-in attempts for this e-mail or from your network, so this one was not checked. ${retryAt ? tryAgainIn(retryAt) : "Try again in a few minutes."}`;
  }
  if (code === "account_disabled") {
    return "This account is disabled. Ask an admin of your team to enable it.";
  }
  return "That e-mail and password do not match an account.";
}

/** The refusal of an error Auth.js threw (the codes and retry time set in lib/auth/config.ts). */
export function refusalOf(error: Error): string {
  const code = "code" in error && typeof error.code === "string" ? error.code : undefined;
  const retryAt = "retryAt" in error && error.retryAt instanceof Date ? error.retryAt : undefined;
  return signInRefusal(code, retryAt);
}
