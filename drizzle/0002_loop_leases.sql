ALTER TABLE "plan_audit_log" ADD COLUMN "seq" bigint NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "plan_audit_log_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "lease_expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "attempt" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "awaiting_steps" jsonb;--> statement-breakpoint
CREATE INDEX "plan_audit_log_plan_seq_idx" ON "plan_audit_log" USING btree ("plan_id","seq");--> statement-breakpoint
CREATE INDEX "plan_step_in_progress_order_idx" ON "plan_step" USING btree ("plan_id","step_order") WHERE "plan_step"."status" = 'in_progress';--> statement-breakpoint
-- Steps handed out before leases existed: their holders get the default lease
-- (30 minutes) from when they started, and count as handed out once. A null
-- lease on an in-progress step would mean "released" and hand it out at once.
UPDATE "plan_step" SET "lease_expires_at" = coalesce("started_at", now()) + interval '30 minutes', "attempt" = 1 WHERE "status" = 'in_progress';--> statement-breakpoint
UPDATE "plan_step" SET "attempt" = 1 WHERE "status" IN ('awaiting_input', 'completed', 'failed') AND "started_at" IS NOT NULL;
