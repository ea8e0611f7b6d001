DROP INDEX "plan_step_pending_idx";--> statement-breakpoint
CREATE INDEX "plan_step_open_idx" ON "plan_step" USING btree ("plan_id","step_order") WHERE "plan_step"."status" in ('pending', 'in_progress');--> statement-breakpoint
CREATE INDEX "plan_step_awaiting_input_idx" ON "plan_step" USING btree ("plan_id") WHERE "plan_step"."status" = 'awaiting_input';