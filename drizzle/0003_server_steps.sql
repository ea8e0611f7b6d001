ALTER TABLE "plan_step" ADD COLUMN "tool" text;--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "arguments" jsonb;--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "inputs" jsonb;--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "output_schema" jsonb;--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "pause_reason" jsonb;