/** The first-run set-up of the web door: open only while no user exists, and only with a setup code. */
import "server-only";
import { getDb } from "../db/client";
import { AppError } from "../plan-engine/app-error";
import { createFirstAdmin } from "../services/accounts/create-first-admin";
import { hasAnyUser } from "../services/accounts/has-any-user";
import { foreignHost, requestClientAddress } from "./request";

export async function needsFirstRun(): Promise<boolean> {
  return !(await hasAnyUser(await getDb()));
}

/** Refuses a request whose Host is not this server's before anything else. */
export async function setUpFirstAdmin(input: Parameters<typeof createFirstAdmin>[1]) {
  const host = await foreignHost();
  if (host !== undefined) {
    throw new AppError(
      "FORBIDDEN",
      `Set-up is refused at the address ${host}: open it at http://127.0.0.1 or localhost on the server's machine, or add this address to CAIRN_ALLOWED_ORIGINS.`,
    );
  }
  return createFirstAdmin(await getDb(), input, { address: await requestClientAddress() });
}
