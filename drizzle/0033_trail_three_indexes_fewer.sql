DROP INDEX "plan_audit_log_plan_time_idx";--> statement-breakpoint
DROP INDEX "plan_audit_log_plan_seq_idx";--> statement-breakpoint
DROP INDEX "plan_audit_log_tenant_time_idx";