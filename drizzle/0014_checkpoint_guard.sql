ALTER TYPE "public"."audit_event_type" ADD VALUE 'output_stored';--> statement-breakpoint
-- The database's backstop for the checkpoint rule (lib/plan-engine/checkpoint-guard.ts,
-- docs/reviews.md "The checkpoint rule"): whatever writes plan_step, a step that
-- stands after a checkpoint nobody has decided never starts or completes, and where
-- the team lets only people decide, a checkpoint completes or is skipped only with
-- a decision that is not an agent's relay. The use cases refuse these first with a
-- message for the caller; this catches a path that forgot to ask. An AFTER trigger,
-- so it sees the whole statement (the decision row and the step are written by one).
CREATE FUNCTION plan_step_checkpoint_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  held integer;
  last_channel decision_channel;
  last_decision review_decision_kind;
BEGIN
  IF NEW.status IN ('in_progress', 'completed') THEN
    SELECT min(step_order) INTO held FROM plan_step
      WHERE plan_id = NEW.plan_id AND step_order < NEW.step_order
        AND step_type = 'checkpoint' AND status IN ('pending', 'in_progress', 'awaiting_input');
    IF held IS NOT NULL THEN
      RAISE EXCEPTION 'step % of plan % stands after checkpoint %, which nobody has decided',
        NEW.step_order, NEW.plan_id, held
        USING ERRCODE = 'check_violation', CONSTRAINT = 'checkpoint_holds_steps_after';
    END IF;
  END IF;
  IF NEW.step_type = 'checkpoint' AND NEW.status IN ('completed', 'skipped')
      AND (SELECT decision_policy FROM tenant WHERE id = NEW.tenant_id) = 'people_only' THEN
    SELECT channel, decision INTO last_channel, last_decision FROM review_decision
      WHERE step_id = NEW.id ORDER BY created_at DESC LIMIT 1;
    IF last_channel IS NULL OR last_channel = 'relayed'
        OR last_decision::text <> (CASE NEW.status WHEN 'completed' THEN 'approve' ELSE 'skip' END) THEN
      RAISE EXCEPTION 'checkpoint % of plan % was % without a person''s decision',
        NEW.step_order, NEW.plan_id, NEW.status
        USING ERRCODE = 'check_violation', CONSTRAINT = 'checkpoint_decided_by_a_person';
    END IF;
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER plan_step_checkpoint_guard AFTER UPDATE OF status ON plan_step
  FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('in_progress', 'completed', 'skipped'))
  EXECUTE FUNCTION plan_step_checkpoint_guard();
