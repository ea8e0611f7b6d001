CREATE TYPE "public"."decision_channel" AS ENUM('web', 'client', 'relayed', 'deadline');--> statement-breakpoint
CREATE TYPE "public"."decision_policy" AS ENUM('people_only', 'people_and_agents');--> statement-breakpoint
ALTER TABLE "tenant" ADD COLUMN "decision_policy" "decision_policy" DEFAULT 'people_and_agents' NOT NULL;--> statement-breakpoint
-- What a reviewer is shown, as one digest (docs/audit.md). Defined once, here,
-- so the request, the review page and the decision compute it alike.
CREATE FUNCTION review_content_digest(summary text, questions jsonb, proposed_result jsonb,
  proposed_confidence double precision, instructions text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT encode(sha256(convert_to(jsonb_build_object('summary', summary, 'questions', questions,
    'proposedResult', proposed_result, 'proposedConfidence', proposed_confidence,
    'instructions', instructions)::text, 'UTF8')), 'hex')
$$;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "proposed_result" jsonb;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "proposed_confidence" double precision;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "step_instructions" text;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "content_digest" text;--> statement-breakpoint
UPDATE "review_request" r SET "step_instructions" = s."instructions",
  "content_digest" = review_content_digest(r."summary", r."questions", NULL, NULL, s."instructions")
FROM "plan_step" s WHERE s."id" = r."step_id";--> statement-breakpoint
ALTER TABLE "review_request" ALTER COLUMN "step_instructions" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "review_request" ALTER COLUMN "content_digest" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "review_decision" ADD COLUMN "channel" "decision_channel";--> statement-breakpoint
ALTER TABLE "review_decision" ADD COLUMN "review_digest" text;--> statement-breakpoint
UPDATE "review_decision" d SET "channel" = (CASE d."decided_by_type" WHEN 'user' THEN 'web'
    WHEN 'system' THEN 'deadline' ELSE 'relayed' END)::decision_channel,
  "review_digest" = r."content_digest"
FROM "review_request" r WHERE r."id" = d."review_request_id";--> statement-breakpoint
ALTER TABLE "review_decision" ALTER COLUMN "channel" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "review_decision" ALTER COLUMN "review_digest" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "plan_audit_log" ADD COLUMN "chain_index" integer;--> statement-breakpoint
ALTER TABLE "plan_audit_log" ADD COLUMN "prev_digest" text;--> statement-breakpoint
ALTER TABLE "plan_audit_log" ADD COLUMN "digest" text;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_audit_log_plan_chain_uq" ON "plan_audit_log" USING btree ("plan_id","chain_index");--> statement-breakpoint
-- The canonical text of an audit row that its digest covers: a JSON array of
-- its fields (jsonb's text form is canonical: keys sorted, one spacing), the
-- time in UTC with microseconds. An auditor recomputes sha256(prev || canonical).
CREATE FUNCTION audit_row_canonical(r plan_audit_log) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_array(r.chain_index, r.tenant_id, r.plan_id, r.step_id, r.event_type,
    r.actor_type, r.actor_id, r.actor_label,
    to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), r.payload)::text
$$;--> statement-breakpoint
-- Every row of a plan's trail links to the one before it, whoever writes it.
-- The advisory lock (per plan, held to commit) orders concurrent writers of one
-- plan's trail; the loop's writers hold the plan's row lock already.
CREATE FUNCTION plan_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last_index integer;
  last_digest text;
BEGIN
  IF NEW.plan_id IS NULL THEN
    RETURN NEW;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended(NEW.plan_id::text, 7));
  SELECT chain_index, digest INTO last_index, last_digest FROM plan_audit_log
    WHERE plan_id = NEW.plan_id AND chain_index IS NOT NULL
    ORDER BY chain_index DESC LIMIT 1;
  NEW.chain_index := coalesce(last_index, 0) + 1;
  NEW.prev_digest := last_digest;
  NEW.digest := encode(sha256(convert_to(coalesce(last_digest, '') || audit_row_canonical(NEW),
    'UTF8')), 'hex');
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER plan_audit_chain BEFORE INSERT ON plan_audit_log
  FOR EACH ROW EXECUTE FUNCTION plan_audit_chain();--> statement-breakpoint
-- Trails written before the chain existed are chained now, in the order they were written.
DO $$
DECLARE
  r plan_audit_log;
  current_plan uuid;
  previous text;
  n integer;
BEGIN
  FOR r IN SELECT * FROM plan_audit_log WHERE plan_id IS NOT NULL ORDER BY plan_id, seq LOOP
    IF current_plan IS DISTINCT FROM r.plan_id THEN
      current_plan := r.plan_id;
      previous := NULL;
      n := 0;
    END IF;
    n := n + 1;
    r.chain_index := n;
    UPDATE plan_audit_log SET chain_index = n, prev_digest = previous,
      digest = encode(sha256(convert_to(coalesce(previous, '') || audit_row_canonical(r), 'UTF8')), 'hex')
    WHERE id = r.id
    RETURNING digest INTO previous;
  END LOOP;
END
$$;
