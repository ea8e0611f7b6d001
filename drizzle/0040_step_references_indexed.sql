DROP INDEX "research_artifact_plan_idx";--> statement-breakpoint
CREATE INDEX "plan_source_first_step_idx" ON "plan_source" USING btree ("first_step_id") WHERE "plan_source"."first_step_id" is not null;--> statement-breakpoint
CREATE INDEX "research_artifact_step_idx" ON "research_artifact" USING btree ("step_id") WHERE "research_artifact"."step_id" is not null;--> statement-breakpoint
CREATE INDEX "review_decision_step_idx" ON "review_decision" USING btree ("step_id","created_at");--> statement-breakpoint
CREATE INDEX "review_decision_tenant_idx" ON "review_decision" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "review_request_step_idx" ON "review_request" USING btree ("step_id");--> statement-breakpoint
CREATE INDEX "review_request_plan_pending_idx" ON "review_request" USING btree ("plan_id") WHERE "review_request"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "step_claim_step_idx" ON "step_claim" USING btree ("step_id");--> statement-breakpoint
CREATE INDEX "research_artifact_plan_idx" ON "research_artifact" USING btree ("plan_id","created_at","id");