CREATE TABLE "plan_step_definition" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"digest" text NOT NULL,
	"definition" jsonb NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "definition_digest" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "plan_step_definition" ADD CONSTRAINT "plan_step_definition_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_step_definition" ADD CONSTRAINT "plan_step_definition_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_step_definition_plan_digest_uq" ON "plan_step_definition" USING btree ("plan_id","digest");--> statement-breakpoint
-- Custom SQL (not generated; keep when regenerating this migration): a step's
-- definition as a revision keeps it, and its digest, in one place each, so
-- the trigger, recordRevision and this backfill agree on them.
CREATE FUNCTION cairn_step_definition(step_type text, instructions text, tool text,
  arguments jsonb, inputs jsonb, output_schema jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object('stepType', step_type, 'instructions', instructions, 'tool', tool,
    'arguments', arguments, 'inputs', inputs, 'outputSchema', output_schema)
$$;--> statement-breakpoint
-- jsonb's text is canonical (keys sorted, one spacing), so equal definitions
-- have equal digests whoever wrote them.
CREATE FUNCTION cairn_step_digest(definition jsonb) RETURNS text LANGUAGE sql AS $$
  SELECT encode(sha256(convert_to(definition::text, 'UTF8')), 'hex')
$$;--> statement-breakpoint
-- Every writer of a step's definition (inserts, modify_plan's updates, a
-- review's modify, a fork's bulk insert) keeps its digest, hashed once per
-- write in the database rather than on every later change of the plan.
CREATE FUNCTION plan_step_definition_digest() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.definition_digest := cairn_step_digest(cairn_step_definition(NEW.step_type::text,
    NEW.instructions, NEW.tool, NEW.arguments, NEW.inputs, NEW.output_schema));
  RETURN NEW;
END;
$$;--> statement-breakpoint
CREATE TRIGGER plan_step_definition_digest BEFORE INSERT OR UPDATE OF step_type, instructions,
  tool, arguments, inputs, output_schema, definition_digest ON plan_step
  FOR EACH ROW EXECUTE FUNCTION plan_step_definition_digest();--> statement-breakpoint
UPDATE plan_step SET definition_digest = cairn_step_digest(cairn_step_definition(step_type::text,
  instructions, tool, arguments, inputs, output_schema));--> statement-breakpoint
-- The revisions written before: each step's definition once per plan, and
-- each revision's steps as id, place and digest.
INSERT INTO plan_step_definition (tenant_id, plan_id, digest, definition)
SELECT DISTINCT ON (r.plan_id, d.digest) r.tenant_id, r.plan_id, d.digest, d.definition
FROM plan_revision r
  CROSS JOIN LATERAL jsonb_array_elements(r.steps) AS e(step)
  CROSS JOIN LATERAL (SELECT cairn_step_definition(e.step->>'stepType', e.step->>'instructions',
      e.step->>'tool', e.step->'arguments', e.step->'inputs', e.step->'outputSchema') AS definition) AS k
  CROSS JOIN LATERAL (SELECT k.definition, cairn_step_digest(k.definition) AS digest) AS d
ON CONFLICT (plan_id, digest) DO NOTHING;--> statement-breakpoint
UPDATE plan_revision r SET steps = coalesce((
  SELECT jsonb_agg(jsonb_build_object('id', e.step->'id', 'stepOrder', e.step->'stepOrder',
      'digest', cairn_step_digest(cairn_step_definition(e.step->>'stepType', e.step->>'instructions',
        e.step->>'tool', e.step->'arguments', e.step->'inputs', e.step->'outputSchema')))
      ORDER BY e.ordinality)
  FROM jsonb_array_elements(r.steps) WITH ORDINALITY AS e(step, ordinality)), '[]'::jsonb);
