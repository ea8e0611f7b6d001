CREATE INDEX "plan_step_undecided_checkpoint_idx" ON "plan_step" USING btree ("plan_id","step_order") WHERE "plan_step"."step_type" = 'checkpoint' and "plan_step"."status" in ('pending', 'in_progress', 'awaiting_input');--> statement-breakpoint
-- The chain's lock order for every writer, taken here once rather than by each
-- writer before its insert (docs/audit.md): the plan's row (FOR KEY SHARE, what
-- the row's foreign key check takes anyway, only later), then the trail's head.
-- A writer that does not hold the plan's lock already (get_research_context,
-- the skill log, evidence) would otherwise take the head first and the plan
-- after it, and deadlock with a loop writer that holds the plan and waits for
-- the head. A writer that holds the plan already finds its own lock.
CREATE OR REPLACE FUNCTION plan_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  previous text;
BEGIN
  IF NEW.plan_id IS NULL THEN
    RETURN NEW;
  END IF;
  PERFORM FROM research_plan WHERE id = NEW.plan_id FOR KEY SHARE;
  LOOP
    UPDATE plan_audit_head SET chain_length = chain_length + 1 WHERE plan_id = NEW.plan_id
      RETURNING chain_length, last_digest INTO NEW.chain_index, previous;
    EXIT WHEN FOUND;
    NEW.chain_index := 1;
    NEW.prev_digest := NULL;
    NEW.digest := encode(sha256(convert_to(audit_row_canonical(NEW), 'UTF8')), 'hex');
    INSERT INTO plan_audit_head (plan_id, tenant_id, chain_length, last_digest)
      VALUES (NEW.plan_id, NEW.tenant_id, 1, NEW.digest)
      ON CONFLICT (plan_id) DO NOTHING;
    IF FOUND THEN
      RETURN NEW;
    END IF;
  END LOOP;
  NEW.prev_digest := previous;
  NEW.digest := encode(sha256(convert_to(previous || audit_row_canonical(NEW), 'UTF8')), 'hex');
  UPDATE plan_audit_head SET last_digest = NEW.digest WHERE plan_id = NEW.plan_id;
  RETURN NEW;
END
$$;
