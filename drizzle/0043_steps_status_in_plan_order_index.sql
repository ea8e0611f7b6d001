-- Custom SQL (all of this migration; drizzle-kit generate --custom; drizzle's
-- index builder has no INCLUDE, so lib/db/schema.ts names the key only):
-- get_plan_status's read of a plan's steps (lib/services/loop/read-plan-status.ts)
-- takes their id, type and status from the plan-order index itself. A plan's
-- steps lie on as many heap pages as it has steps once they have been
-- updated (each update puts the row's new version wherever there is room),
-- so the read cost a page per step, mostly from outside PostgreSQL's buffers
-- in a large database; the index holds them side by side, and an index-only
-- scan reads one or two of its pages where the visibility map says the rows
-- are visible to all (autovacuum sets it on the pages of plans at rest). The
-- times a stall warning needs are read from the row for steps in progress
-- only. The included columns change only where an update is never HOT
-- already (the status and the type are in partial indexes' predicates), so
-- no update stops being HOT.
--
-- The new index is built under a name of its own before the old one is
-- dropped: the build blocks writes to plan_step but not reads, and the drop's
-- exclusive lock is held only from the drop to the commit. It is created only
-- if missing, so it may be built beforehand without blocking (docs/operations.md).
CREATE INDEX IF NOT EXISTS "plan_step_plan_order_incl_idx" ON "plan_step" USING btree ("plan_id","step_order") INCLUDE ("tenant_id","id","step_type","status");--> statement-breakpoint
DROP INDEX "plan_step_plan_order_idx";--> statement-breakpoint
ALTER INDEX "plan_step_plan_order_incl_idx" RENAME TO "plan_step_plan_order_idx";
