/**
 * Whether anyone has an account yet: the first-run page exists only while
 * nobody does. Asked before there is any tenant, so it takes the database.
 */
import "server-only";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";

export async function hasAnyUser(db: Database): Promise<boolean> {
  const [row] = await db.select({ id: users.id }).from(users).limit(1);
  return row !== undefined;
}
