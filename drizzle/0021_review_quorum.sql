ALTER TYPE "public"."team_event_type" ADD VALUE 'review_quorum_changed';--> statement-breakpoint
CREATE TABLE "review_approval" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"review_request_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"approver_id" uuid NOT NULL,
	"approved_by_type" "actor_type" NOT NULL,
	"approved_by_id" uuid,
	"approved_by_label" text NOT NULL,
	"channel" "decision_channel" NOT NULL,
	"review_digest" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "approvals_required" integer;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "approvals_required" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "tenant" ADD COLUMN "review_approvals_required" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "review_approval" ADD CONSTRAINT "review_approval_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_approval" ADD CONSTRAINT "review_approval_review_request_id_review_request_id_fk" FOREIGN KEY ("review_request_id") REFERENCES "public"."review_request"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_approval" ADD CONSTRAINT "review_approval_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "review_approval_person_idx" ON "review_approval" USING btree ("review_request_id","approver_id");--> statement-breakpoint
ALTER TABLE "tenant" ADD CONSTRAINT "tenant_review_approvals_required_check" CHECK ("tenant"."review_approvals_required" between 1 and 10);