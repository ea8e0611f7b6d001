/** The first-run set-up of the web door: open only while no user exists. */
import { getDb } from "../db/client";
import { createFirstAdmin, hasAnyUser } from "../services/accounts";

export async function needsFirstRun(): Promise<boolean> {
  return !(await hasAnyUser(await getDb()));
}

export async function setUpFirstAdmin(input: Parameters<typeof createFirstAdmin>[1]) {
  return createFirstAdmin(await getDb(), input);
}
