ALTER TYPE "public"."audit_event_type" ADD VALUE 'evidence_recorded';--> statement-breakpoint
CREATE TABLE "plan_source" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"canonical_key" text NOT NULL,
	"kind" text NOT NULL,
	"href" text NOT NULL,
	"title" text,
	"extract" text,
	"content_digest" text,
	"first_step_id" uuid,
	"first_read_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "step_claim" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"step_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"text" text NOT NULL,
	"key_claim" boolean DEFAULT false NOT NULL,
	"supports" jsonb NOT NULL,
	"contradicts" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "research_output" ADD COLUMN "citation_check" jsonb;--> statement-breakpoint
ALTER TABLE "plan_source" ADD CONSTRAINT "plan_source_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_source" ADD CONSTRAINT "plan_source_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_source" ADD CONSTRAINT "plan_source_first_step_id_plan_step_id_fk" FOREIGN KEY ("first_step_id") REFERENCES "public"."plan_step"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "step_claim" ADD CONSTRAINT "step_claim_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "step_claim" ADD CONSTRAINT "step_claim_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "step_claim" ADD CONSTRAINT "step_claim_step_id_plan_step_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."plan_step"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_source_plan_key_uq" ON "plan_source" USING btree ("plan_id","canonical_key");--> statement-breakpoint
CREATE INDEX "step_claim_plan_step_idx" ON "step_claim" USING btree ("plan_id","step_id","position");