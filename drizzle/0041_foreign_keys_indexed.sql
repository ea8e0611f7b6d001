CREATE INDEX "api_key_user_idx" ON "api_key" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "email_delivery_user_idx" ON "email_delivery" USING btree ("user_id") WHERE "email_delivery"."user_id" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "mcp_tool_call_log_api_key_idx" ON "mcp_tool_call_log" USING btree ("api_key_id") WHERE "mcp_tool_call_log"."api_key_id" is not null;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "mcp_tool_call_log_oauth_grant_idx" ON "mcp_tool_call_log" USING btree ("oauth_grant_id") WHERE "mcp_tool_call_log"."oauth_grant_id" is not null;--> statement-breakpoint
CREATE INDEX "oauth_authorization_code_client_idx" ON "oauth_authorization_code" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "oauth_authorization_code_user_idx" ON "oauth_authorization_code" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "oauth_grant_user_idx" ON "oauth_grant" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "research_feedback_execution_idx" ON "research_feedback" USING btree ("execution_id") WHERE "research_feedback"."execution_id" is not null;--> statement-breakpoint
CREATE INDEX "research_output_execution_idx" ON "research_output" USING btree ("execution_id") WHERE "research_output"."execution_id" is not null;--> statement-breakpoint
CREATE INDEX "research_plan_created_by_key_idx" ON "research_plan" USING btree ("created_by_key_id") WHERE "research_plan"."created_by_key_id" is not null;--> statement-breakpoint
CREATE INDEX "research_plan_created_by_user_idx" ON "research_plan" USING btree ("created_by_user_id") WHERE "research_plan"."created_by_user_id" is not null;--> statement-breakpoint
CREATE INDEX "review_approval_plan_idx" ON "review_approval" USING btree ("plan_id");--> statement-breakpoint
CREATE INDEX "review_request_assigned_user_idx" ON "review_request" USING btree ("assigned_user_id") WHERE "review_request"."assigned_user_id" is not null;--> statement-breakpoint
CREATE INDEX "review_snooze_user_all_idx" ON "review_snooze" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "review_snooze_plan_idx" ON "review_snooze" USING btree ("plan_id");