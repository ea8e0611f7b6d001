ALTER TYPE "public"."team_event_type" ADD VALUE 'review_escalation_changed';--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "assigned_user_ids" uuid[];--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "escalation_chain" jsonb;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "escalation_level" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "escalation_due_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tenant" ADD COLUMN "review_escalation_chain" jsonb;--> statement-breakpoint
CREATE INDEX "review_request_escalation_idx" ON "review_request" USING btree ("escalation_due_at") WHERE "review_request"."status" = 'pending' and "review_request"."escalation_due_at" is not null;--> statement-breakpoint
ALTER TABLE "review_request" ADD CONSTRAINT "review_request_assignee_check" CHECK (num_nonnulls("review_request"."assigned_user_id", "review_request"."assigned_role", "review_request"."assigned_user_ids") <= 1);--> statement-breakpoint
ALTER TABLE "tenant" ADD CONSTRAINT "tenant_review_escalation_chain_check" CHECK ("tenant"."review_escalation_chain" is null or jsonb_array_length("tenant"."review_escalation_chain") between 1 and 5);