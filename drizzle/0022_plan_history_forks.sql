CREATE TABLE "plan_revision" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"revision" integer NOT NULL,
	"cause" text NOT NULL,
	"rationale" text,
	"actor_type" "actor_type" NOT NULL,
	"actor_id" uuid,
	"actor_label" text NOT NULL,
	"steps" jsonb NOT NULL,
	"diff" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plan_step" ADD COLUMN "carried_from_step_id" uuid;--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "forked_from_plan_id" uuid;--> statement-breakpoint
ALTER TABLE "research_plan" ADD COLUMN "forked_from_step_id" uuid;--> statement-breakpoint
ALTER TABLE "plan_revision" ADD CONSTRAINT "plan_revision_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "plan_revision" ADD CONSTRAINT "plan_revision_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "plan_revision_plan_revision_uq" ON "plan_revision" USING btree ("plan_id","revision");--> statement-breakpoint
CREATE INDEX "research_plan_forked_from_idx" ON "research_plan" USING btree ("forked_from_plan_id","created_at") WHERE "research_plan"."forked_from_plan_id" is not null;--> statement-breakpoint-- Custom SQL (not generated; keep when regenerating this migration): a plan
-- made before revisions were kept gets revision 1, its steps as they stand
-- now, so its next change is revision 2 and a revert has somewhere to go.
INSERT INTO "plan_revision" ("tenant_id", "plan_id", "revision", "cause", "rationale",
  "actor_type", "actor_label", "steps", "diff", "created_at")
SELECT p."tenant_id", p."id", 1, 'created', 'Revisions began to be kept after this plan was made: its steps as they stood then.',
  'system', 'Cairn',
  coalesce((SELECT jsonb_agg(jsonb_build_object('id', s."id", 'stepOrder', s."step_order",
      'stepType', s."step_type", 'instructions', s."instructions", 'tool', s."tool",
      'arguments', s."arguments", 'inputs', s."inputs", 'outputSchema', s."output_schema")
      ORDER BY s."step_order")
    FROM "plan_step" s WHERE s."plan_id" = p."id"), '[]'::jsonb),
  jsonb_build_object('added', '[]'::jsonb, 'removed', '[]'::jsonb, 'moved', '[]'::jsonb,
    'instructions', '[]'::jsonb, 'arguments', '[]'::jsonb, 'status', '[]'::jsonb, 'omitted', 0),
  now()
FROM "research_plan" p;
