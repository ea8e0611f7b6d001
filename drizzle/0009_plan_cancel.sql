ALTER TYPE "public"."plan_status" ADD VALUE 'cancelled';--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "cancellation" jsonb;