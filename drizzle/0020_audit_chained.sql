-- Custom SQL (issue 45), in place of drizzle-kit's plain ADD CONSTRAINT; keep it
-- when this migration is regenerated. Every row of a plan's trail has its
-- place in the chain and its digest (the plan_audit_chain trigger writes them);
-- rows of no plan belong to no chain. The check before: a row of a plan
-- without them can only have been written past the trigger, and no value can
-- be filled in for it without hiding that, so where one exists the constraint
-- is added NOT VALID: new rows are held to it, the old ones are left as they
-- are for verify-audit to report ("the row has no place in the chain").
DO $$
BEGIN
  IF EXISTS (
    SELECT 1 FROM "plan_audit_log"
    WHERE "plan_id" IS NOT NULL AND ("chain_index" IS NULL OR "digest" IS NULL)
  ) THEN
    RAISE WARNING 'plan_audit_log has rows of a plan outside its chain: plan_audit_log_chained holds new rows only; run verify-audit';
    ALTER TABLE "plan_audit_log" ADD CONSTRAINT "plan_audit_log_chained" CHECK ("plan_audit_log"."plan_id" is null or ("plan_audit_log"."chain_index" is not null and "plan_audit_log"."digest" is not null)) NOT VALID;
  ELSE
    ALTER TABLE "plan_audit_log" ADD CONSTRAINT "plan_audit_log_chained" CHECK ("plan_audit_log"."plan_id" is null or ("plan_audit_log"."chain_index" is not null and "plan_audit_log"."digest" is not null));
  END IF;
END
$$;
