CREATE TYPE "public"."actor_type" AS ENUM('api_key', 'user', 'system');--> statement-breakpoint
CREATE TYPE "public"."audit_event_type" AS ENUM('step_started', 'step_completed', 'step_failed', 'plan_modified', 'user_reviewed', 'session_resumed', 'skill_started', 'skill_completed');--> statement-breakpoint
CREATE TYPE "public"."feedback_type" AS ENUM('initial', 'closing');--> statement-breakpoint
CREATE TYPE "public"."plan_status" AS ENUM('planning', 'executing', 'awaiting_review', 'stalled', 'completed', 'failed');--> statement-breakpoint
CREATE TYPE "public"."review_decision_kind" AS ENUM('approve', 'reject', 'modify', 'skip');--> statement-breakpoint
CREATE TYPE "public"."review_request_status" AS ENUM('pending', 'decided', 'withdrawn');--> statement-breakpoint
CREATE TYPE "public"."skill_execution_status" AS ENUM('started', 'executing', 'completed', 'failed');--> statement-breakpoint
CREATE TYPE "public"."step_status" AS ENUM('pending', 'in_progress', 'awaiting_input', 'completed', 'skipped', 'failed');--> statement-breakpoint
CREATE TYPE "public"."step_type" AS ENUM('search', 'extract', 'analyze', 'critique', 'synthesize', 'checkpoint', 'custom');--> statement-breakpoint
CREATE TYPE "public"."user_role" AS ENUM('researcher', 'admin');--> statement-breakpoint
CREATE TABLE "api_key" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"name" text NOT NULL,
	"key_prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_key_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "mcp_tool_call_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"api_key_id" uuid,
	"tool_name" text NOT NULL,
	"duration_ms" double precision NOT NULL,
	"is_error" boolean NOT NULL,
	"error_code" text,
	"request_bytes" integer NOT NULL,
	"response_bytes" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_audit_log" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid,
	"step_id" uuid,
	"event_type" "audit_event_type" NOT NULL,
	"actor_type" "actor_type" NOT NULL,
	"actor_id" uuid,
	"actor_label" text NOT NULL,
	"payload" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_branching_condition" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"after_step_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"condition_expression" text NOT NULL,
	"if_true_action" text NOT NULL,
	"action_params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"evaluated_at" timestamp with time zone,
	"fired" boolean,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "plan_step" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"step_order" integer NOT NULL,
	"step_type" "step_type" NOT NULL,
	"instructions" text NOT NULL,
	"status" "step_status" DEFAULT 'pending' NOT NULL,
	"result" jsonb,
	"result_summary" text,
	"confidence" double precision,
	"step_execution_report" jsonb,
	"output_formatting_notes" text,
	"failure_reason" text,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "research_artifact" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid,
	"step_id" uuid,
	"artifact_type" text NOT NULL,
	"title" text NOT NULL,
	"content" jsonb NOT NULL,
	"content_text" text NOT NULL,
	"confidence" double precision,
	"source_urls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "research_feedback" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"execution_id" uuid,
	"feedback_type" "feedback_type" NOT NULL,
	"satisfaction" integer NOT NULL,
	"summary" text NOT NULL,
	"improvement_suggestions" text,
	"follow_up_requested" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "research_output" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"execution_id" uuid,
	"output_media_type" text NOT NULL,
	"content" text NOT NULL,
	"formatting_notes" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "research_plan" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"research_question" text NOT NULL,
	"status" "plan_status" DEFAULT 'planning' NOT NULL,
	"plan_design_rationale" text,
	"output_formatting_notes" text,
	"session_id" text,
	"created_by_key_id" uuid,
	"created_by_user_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "review_decision" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"review_request_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"step_id" uuid NOT NULL,
	"decision" "review_decision_kind" NOT NULL,
	"feedback" text,
	"decided_by_type" "actor_type" NOT NULL,
	"decided_by_id" uuid,
	"decided_by_label" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "review_decision_review_request_id_unique" UNIQUE("review_request_id")
);
--> statement-breakpoint
CREATE TABLE "review_request" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"step_id" uuid NOT NULL,
	"summary" text NOT NULL,
	"questions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"status" "review_request_status" DEFAULT 'pending' NOT NULL,
	"requested_by_type" "actor_type" NOT NULL,
	"requested_by_id" uuid,
	"requested_by_label" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "skill_execution" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid,
	"skill_name" text NOT NULL,
	"status" "skill_execution_status" DEFAULT 'started' NOT NULL,
	"session_id" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error_message" text,
	"closed_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "tenant" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tenant_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "app_user" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"password_hash" text NOT NULL,
	"role" "user_role" DEFAULT 'researcher' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_user_id_app_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tool_call_log" ADD CONSTRAINT "mcp_tool_call_log_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tool_call_log" ADD CONSTRAINT "mcp_tool_call_log_api_key_id_api_key_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_key"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_audit_log" ADD CONSTRAINT "plan_audit_log_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_audit_log" ADD CONSTRAINT "plan_audit_log_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_branching_condition" ADD CONSTRAINT "plan_branching_condition_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_branching_condition" ADD CONSTRAINT "plan_branching_condition_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_branching_condition" ADD CONSTRAINT "plan_branching_condition_after_step_id_plan_step_id_fk" FOREIGN KEY ("after_step_id") REFERENCES "public"."plan_step"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_step" ADD CONSTRAINT "plan_step_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_step" ADD CONSTRAINT "plan_step_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_artifact" ADD CONSTRAINT "research_artifact_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_artifact" ADD CONSTRAINT "research_artifact_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_artifact" ADD CONSTRAINT "research_artifact_step_id_plan_step_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."plan_step"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_feedback" ADD CONSTRAINT "research_feedback_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_feedback" ADD CONSTRAINT "research_feedback_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_feedback" ADD CONSTRAINT "research_feedback_execution_id_skill_execution_id_fk" FOREIGN KEY ("execution_id") REFERENCES "public"."skill_execution"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_output" ADD CONSTRAINT "research_output_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_output" ADD CONSTRAINT "research_output_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_output" ADD CONSTRAINT "research_output_execution_id_skill_execution_id_fk" FOREIGN KEY ("execution_id") REFERENCES "public"."skill_execution"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_plan" ADD CONSTRAINT "research_plan_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_plan" ADD CONSTRAINT "research_plan_created_by_key_id_api_key_id_fk" FOREIGN KEY ("created_by_key_id") REFERENCES "public"."api_key"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "research_plan" ADD CONSTRAINT "research_plan_created_by_user_id_app_user_id_fk" FOREIGN KEY ("created_by_user_id") REFERENCES "public"."app_user"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_decision" ADD CONSTRAINT "review_decision_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_decision" ADD CONSTRAINT "review_decision_review_request_id_review_request_id_fk" FOREIGN KEY ("review_request_id") REFERENCES "public"."review_request"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_decision" ADD CONSTRAINT "review_decision_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_decision" ADD CONSTRAINT "review_decision_step_id_plan_step_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."plan_step"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_request" ADD CONSTRAINT "review_request_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_request" ADD CONSTRAINT "review_request_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_request" ADD CONSTRAINT "review_request_step_id_plan_step_id_fk" FOREIGN KEY ("step_id") REFERENCES "public"."plan_step"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_execution" ADD CONSTRAINT "skill_execution_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skill_execution" ADD CONSTRAINT "skill_execution_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "app_user" ADD CONSTRAINT "app_user_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_key_tenant_idx" ON "api_key" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "mcp_tool_call_log_tenant_time_idx" ON "mcp_tool_call_log" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "mcp_tool_call_log_tool_time_idx" ON "mcp_tool_call_log" USING btree ("tenant_id","tool_name","created_at");--> statement-breakpoint
CREATE INDEX "plan_audit_log_plan_time_idx" ON "plan_audit_log" USING btree ("plan_id","created_at");--> statement-breakpoint
CREATE INDEX "plan_audit_log_tenant_time_idx" ON "plan_audit_log" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "plan_branching_condition_step_idx" ON "plan_branching_condition" USING btree ("after_step_id");--> statement-breakpoint
CREATE INDEX "plan_branching_condition_plan_idx" ON "plan_branching_condition" USING btree ("plan_id");--> statement-breakpoint
CREATE INDEX "plan_step_plan_order_idx" ON "plan_step" USING btree ("plan_id","step_order");--> statement-breakpoint
CREATE INDEX "plan_step_pending_idx" ON "plan_step" USING btree ("plan_id","step_order") WHERE "plan_step"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "plan_step_in_progress_idx" ON "plan_step" USING btree ("tenant_id","started_at") WHERE "plan_step"."status" = 'in_progress';--> statement-breakpoint
CREATE INDEX "research_artifact_tenant_time_idx" ON "research_artifact" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "research_artifact_plan_idx" ON "research_artifact" USING btree ("plan_id");--> statement-breakpoint
CREATE INDEX "research_feedback_plan_idx" ON "research_feedback" USING btree ("plan_id","created_at");--> statement-breakpoint
CREATE INDEX "research_output_plan_idx" ON "research_output" USING btree ("plan_id","created_at");--> statement-breakpoint
CREATE INDEX "research_plan_tenant_status_idx" ON "research_plan" USING btree ("tenant_id","status","updated_at");--> statement-breakpoint
CREATE INDEX "research_plan_tenant_updated_idx" ON "research_plan" USING btree ("tenant_id","updated_at");--> statement-breakpoint
CREATE INDEX "review_decision_plan_idx" ON "review_decision" USING btree ("plan_id","created_at");--> statement-breakpoint
CREATE INDEX "review_request_plan_idx" ON "review_request" USING btree ("plan_id","created_at");--> statement-breakpoint
CREATE INDEX "skill_execution_session_idx" ON "skill_execution" USING btree ("tenant_id","session_id","status","created_at");--> statement-breakpoint
CREATE INDEX "skill_execution_plan_idx" ON "skill_execution" USING btree ("plan_id");--> statement-breakpoint
CREATE UNIQUE INDEX "app_user_email_uq" ON "app_user" USING btree (lower("email"));