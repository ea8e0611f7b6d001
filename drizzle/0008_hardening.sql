CREATE TYPE "public"."account_event_type" AS ENUM('password_changed', 'user_disabled', 'user_enabled');--> statement-breakpoint
CREATE TABLE "account_audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"user_email" text NOT NULL,
	"event_type" "account_event_type" NOT NULL,
	"actor_type" "actor_type" NOT NULL,
	"actor_id" uuid,
	"actor_label" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "oauth_client" ADD COLUMN "fetch_error" text;--> statement-breakpoint
ALTER TABLE "account_audit_log" ADD CONSTRAINT "account_audit_log_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "account_audit_log_tenant_time_idx" ON "account_audit_log" USING btree ("tenant_id","created_at");--> statement-breakpoint
ALTER TABLE "tenant" DROP COLUMN "allow_private_webhooks";