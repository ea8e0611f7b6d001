CREATE TYPE "public"."team_event_type" AS ENUM('decision_policy_changed', 'review_defaults_changed', 'trusted_clients_changed');--> statement-breakpoint
CREATE TABLE "team_audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"event_type" "team_event_type" NOT NULL,
	"actor_type" "actor_type" NOT NULL,
	"actor_id" uuid,
	"actor_label" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "review_decision" ADD COLUMN "decision_policy" "decision_policy";--> statement-breakpoint
ALTER TABLE "tenant" ADD COLUMN "trusted_clients" jsonb;--> statement-breakpoint
ALTER TABLE "team_audit_log" ADD CONSTRAINT "team_audit_log_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "team_audit_log_tenant_time_idx" ON "team_audit_log" USING btree ("tenant_id","created_at");