CREATE INDEX "plan_step_failed_idx" ON "plan_step" USING btree ("tenant_id","plan_id") WHERE "plan_step"."status" = 'failed';--> statement-breakpoint
-- Custom SQL (not generated; keep when regenerating this migration): the
-- checkpoint guard's backstop for a step that arrives started or done, as a
-- fork's carried steps do (docs/history-and-forks.md, "Checkpoints in forks").
-- Whatever inserts it, the update's own check (plan_step_checkpoint_guard,
-- drizzle/0014_checkpoint_guard.sql) runs on it: no step behind a checkpoint
-- nobody has decided, and under people_only no checkpoint passed without a
-- person's matching decision. And a checkpoint that arrives completed or
-- skipped needs a decision that stands, as `carriedDecisionCounts` says: its
-- newest decision was made on what the step shows (the review's digest over
-- the step's instructions as inserted), and under people_only it was made in
-- Cairn or a trusted client (not a relay, nor a deadline). Both are deferred to
-- the commit: a fork writes a step's reviews and decisions after the step.
CREATE FUNCTION plan_step_arrives_decided_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last_channel decision_channel;
  same_content boolean;
BEGIN
  SELECT d.channel,
      d.review_digest = review_content_digest(r.summary, r.questions, r.proposed_result::jsonb,
        r.proposed_confidence, NEW.instructions)
    INTO last_channel, same_content
    FROM review_decision d JOIN review_request r ON r.id = d.review_request_id
    WHERE d.step_id = NEW.id ORDER BY d.created_at DESC LIMIT 1;
  IF same_content IS FALSE THEN
    RAISE EXCEPTION 'checkpoint % of plan % arrives % on a decision made on other content',
      NEW.step_order, NEW.plan_id, NEW.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'carried_checkpoint_decision_stands';
  END IF;
  IF (SELECT decision_policy FROM tenant WHERE id = NEW.tenant_id) = 'people_only'
      AND (last_channel IS NULL OR last_channel NOT IN ('web', 'client')) THEN
    RAISE EXCEPTION 'checkpoint % of plan % arrives % without a person''s decision',
      NEW.step_order, NEW.plan_id, NEW.status
      USING ERRCODE = 'check_violation', CONSTRAINT = 'checkpoint_decided_by_a_person';
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE CONSTRAINT TRIGGER plan_step_arrives_guard AFTER INSERT ON plan_step
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN (NEW.status IN ('in_progress', 'completed', 'skipped'))
  EXECUTE FUNCTION plan_step_checkpoint_guard();--> statement-breakpoint
CREATE CONSTRAINT TRIGGER plan_step_arrives_decided_guard AFTER INSERT ON plan_step
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN (NEW.step_type = 'checkpoint' AND NEW.status IN ('completed', 'skipped'))
  EXECUTE FUNCTION plan_step_arrives_decided_guard();
