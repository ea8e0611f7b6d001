-- Custom SQL (drizzle-kit generate --custom; keep when regenerating): the
-- checkpoint guard's trigger (drizzle/0030_checkpoint_guard_simple_expressions.sql)
-- finds the first undecided checkpoint before the step as the first entry of
-- the undecided checkpoints' index in step order, where min() planned as an
-- aggregate over that index: the same answer, but an aggregate's executor
-- state (its transition functions and memory contexts) was set up on every
-- hand-out and every submit, two of each step's (docs/performance.md, "A
-- smaller plan for the common step").
CREATE OR REPLACE FUNCTION plan_step_checkpoint_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held integer;
  last_channel decision_channel;
  last_decision review_decision_kind;
BEGIN
  IF NEW.status IN ('in_progress', 'completed') THEN
    SELECT step_order INTO held FROM plan_step
      WHERE plan_id = NEW.plan_id AND step_order < NEW.step_order
        AND step_type = 'checkpoint' AND status IN ('pending', 'in_progress', 'awaiting_input')
      ORDER BY step_order LIMIT 1;
    IF held IS NOT NULL THEN
      RAISE EXCEPTION 'step % of plan % stands after checkpoint %, which nobody has decided',
        NEW.step_order, NEW.plan_id, held
        USING ERRCODE = 'check_violation', CONSTRAINT = 'checkpoint_holds_steps_after';
    END IF;
  END IF;
  IF NEW.step_type = 'checkpoint' AND NEW.status IN ('completed', 'skipped') THEN
    IF (SELECT decision_policy FROM tenant WHERE id = NEW.tenant_id) = 'people_only' THEN
      SELECT channel, decision INTO last_channel, last_decision FROM review_decision
        WHERE step_id = NEW.id ORDER BY created_at DESC LIMIT 1;
      IF last_channel IS NULL OR last_channel = 'relayed'
          OR last_decision::text <> (CASE NEW.status WHEN 'completed' THEN 'approve' ELSE 'skip' END) THEN
        RAISE EXCEPTION 'checkpoint % of plan % was % without a person''s decision',
          NEW.step_order, NEW.plan_id, NEW.status
          USING ERRCODE = 'check_violation', CONSTRAINT = 'checkpoint_decided_by_a_person';
      END IF;
    END IF;
  END IF;
  RETURN NULL;
END
$$;
