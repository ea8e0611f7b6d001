/**
 * Migration 0020's statement (the plan_audit_log_chained check, added NOT
 * VALID where rows of a plan already lie outside their chain), run again on a
 * database: how a test restores the check it dropped to tamper as someone with
 * SQL could, and how it tests the migration's own check of the rows before.
 */
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import type { Executor } from "@/lib/db/client";

export async function addChainedCheck(db: Executor): Promise<void> {
  await db.execute(sql.raw(readFileSync("drizzle/0020_audit_chained.sql", "utf8")));
}

export async function dropChainedCheck(db: Executor): Promise<void> {
  await db.execute(sql`alter table plan_audit_log drop constraint plan_audit_log_chained`);
}
