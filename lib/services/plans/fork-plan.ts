/**
 * fork_plan (docs/history-and-forks.md): a new plan of the same team from a
 * step of another. The engine (`decideFork`) says which steps are carried
 * with their results and which start again with the edits; this file reads
 * the source under its lock and copies, in one transaction and in the
 * database (a carried result never passes through the server): the steps,
 * the branching conditions, the carried steps' sources, claims, artifacts and
 * decided reviews, and both trails' rows (the fork's is its revision 1). The source
 * is read, never changed, but for its trail.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { researchPlans } from "../../db/schema";
import { jsonParam } from "../../db/statement";
import { AppError } from "../../plan-engine/app-error";
import { decideFork, type ForkSourceStep } from "../../plan-engine/fork";
import { DECISION_CHANNELS, REVIEW_DECISIONS } from "../../plan-engine/states";
import { readDecisionPolicy } from "../reviews/decision-rules";
import { currentReviewDigest } from "../reviews/review-digest";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import {
  instructionsField,
  jsonAtMost,
  MAX_STEP_IO_BYTES,
  MAX_STEPS,
  planIdField,
  stepIdField,
} from "../shared/fields";
import { planStatus, stepStatus, stepType } from "../shared/output-fields";
import { loadSteps, lockPlan } from "../shared/plan-access";
import { checkDefinitionTotal, planDefinitionBytes } from "../shared/plan-definitions";
import { validateStepDefinition } from "../shared/server-step-tools";
import { parseInput } from "../shared/validation";
import { creatorColumns } from "./create-plan";

export const forkPlanInput = z.object({
  planId: planIdField,
  fromStepId: stepIdField,
  stepEdits: z
    .array(
      z.object({
        stepId: stepIdField,
        instructions: instructionsField.optional(),
        arguments: jsonAtMost(
          z.record(z.string(), z.unknown()).optional(),
          MAX_STEP_IO_BYTES,
          "pass a large input through a binding to an earlier step's result instead.",
        ),
      }),
    )
    .max(MAX_STEPS)
    .optional(),
  name: z.string().trim().min(1).max(300).optional(),
});

export type ForkPlanInput = z.input<typeof forkPlanInput>;

export const forkedPlanOutput = z.object({
  planId: z.string(),
  name: z.string(),
  status: planStatus,
  forkedFrom: z.object({ planId: z.string(), stepId: z.string(), stepOrder: z.number() }),
  steps: z.array(
    z.object({
      stepId: z.string(),
      stepOrder: z.number(),
      stepType,
      status: stepStatus,
      carriedFromStepId: z.string().nullable(),
    }),
  ),
  /** Set when a carried checkpoint's decision did not count, so the fork starts at it. */
  reopened: z.string().optional(),
});

export type ForkedPlan = z.infer<typeof forkedPlanOutput>;

const lastDecisionRow = z.object({
  stepId: z.string(),
  decision: z.enum(REVIEW_DECISIONS),
  channel: z.enum(DECISION_CHANNELS),
  decidedDigest: z.string(),
  currentDigest: z.string(),
});

/**
 * `once`: refuse (CONFLICT) when the source already has a fork from
 * `fromStepId`. Checked under the source's lock, so of two calls at once the
 * second finds the first's fork: how a bulk fork from failure, sent twice,
 * forks each plan once (fork-failed-plans.ts).
 */
export type ForkOptions = { once?: boolean };

export async function forkPlan(
  ctx: ServiceContext,
  raw: ForkPlanInput,
  options: ForkOptions = {},
): Promise<ForkedPlan> {
  const input = parseInput(forkPlanInput, raw);
  return ctx.db.transaction(async (tx) => {
    // The source's lock holds its changes off while it is copied.
    const source = await lockPlan(tx, ctx, input.planId);
    if (options.once) await refuseSecondFork(tx, ctx, source.id, input.fromStepId);
    const stepsRead = await loadSteps(tx, ctx, source.id);
    const decisions = await selectRows(
      tx,
      lastDecisionRow,
      sql`select distinct on (d.step_id) d.step_id as "stepId", d.decision, d.channel,
          d.review_digest as "decidedDigest", ${currentReviewDigest} as "currentDigest"
        from review_decision d
        join review_request review on review.id = d.review_request_id
        join plan_step step on step.id = d.step_id
        where d.plan_id = ${source.id} and d.tenant_id = ${ctx.tenantId}
          and step.step_type = 'checkpoint'
        order by d.step_id, d.created_at desc`,
    );
    const decisionOf = new Map(decisions.map((row) => [row.stepId, row]));
    const sourceSteps: ForkSourceStep[] = stepsRead.map((step) => ({
      ...step,
      decision: decisionOf.get(step.id) ?? null,
    }));
    const decided = decideFork(
      source.id,
      sourceSteps,
      input.fromStepId,
      input.stepEdits ?? [],
      await readDecisionPolicy(tx, ctx.tenantId),
    );
    const byId = new Map(stepsRead.map((step) => [step.id, step]));
    for (const step of decided.steps) {
      const stored = byId.get(step.sourceStepId);
      if (!step.edited || !stored) continue;
      validateStepDefinition(step.stepOrder, {
        stepType: stored.stepType,
        tool: stored.tool ?? undefined,
        arguments: step.arguments ?? undefined,
      });
    }
    const now = new Date();
    const name = input.name ?? `${source.name} (fork)`.slice(0, 300);
    const carriedAny = decided.steps.some((step) => step.carried);
    const [plan] = await tx
      .insert(researchPlans)
      .values({
        tenantId: ctx.tenantId,
        name,
        researchQuestion: source.researchQuestion,
        planDesignRationale: source.planDesignRationale,
        outputFormattingNotes: source.outputFormattingNotes,
        // The approvals its reviews need, as the source asked (never fewer than the team's).
        approvalsRequired: source.approvalsRequired,
        status: carriedAny ? "executing" : "planning",
        ...creatorColumns(ctx),
        forkedFromPlanId: source.id,
        forkedFromStepId: input.fromStepId,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: researchPlans.id });
    if (!plan) throw new Error("the fork was not created");
    const map = decided.steps.map((step) => ({
      old: step.sourceStepId,
      new: randomUUID(),
      carried: step.carried,
      instructions: step.edited ? step.instructions : null,
      arguments: step.edited ? step.arguments : null,
      edited: step.edited,
    }));
    await copyPlan(tx, ctx, { sourceId: source.id, forkId: plan.id, map, now });
    // Edits may not take the fork over the total, unless its source already was.
    await checkDefinitionTotal(tx, ctx, plan.id, await planDefinitionBytes(tx, ctx, source.id));
    const fromOrder = byId.get(input.fromStepId)?.stepOrder ?? decided.startOrder;
    const carried = map.filter((step) => step.carried);
    await writeAuditLog(tx, ctx, [
      {
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "forked",
          fromPlanId: source.id,
          fromStepId: input.fromStepId,
          fromStepOrder: fromOrder,
          startOrder: decided.startOrder,
          // Each carried step arrives settled, in its source's status: the
          // trail says so, so it alone tells every step's status (as a replay reads it).
          carriedSteps: carried.map((step) => ({
            stepId: step.new,
            status: byId.get(step.old)?.status ?? "completed",
          })),
          editedStepIds: map.filter((step) => step.edited).map((step) => step.new),
          ...(decided.reopened ? { reopened: decided.reopened.reason } : {}),
        },
      },
      {
        eventType: "plan_modified",
        planId: source.id,
        stepId: input.fromStepId,
        payload: { action: "fork_made", forkPlanId: plan.id, fromStepOrder: fromOrder },
      },
    ]);
    return {
      planId: plan.id,
      name,
      status: carriedAny ? "executing" : "planning",
      forkedFrom: { planId: source.id, stepId: input.fromStepId, stepOrder: fromOrder },
      steps: decided.steps.map((step, index) => {
        const stored = byId.get(step.sourceStepId);
        return {
          stepId: map[index]?.new ?? "",
          stepOrder: step.stepOrder,
          stepType: stored?.stepType ?? "custom",
          status: step.carried ? (stored?.status ?? "completed") : "pending",
          carriedFromStepId: step.carried ? step.sourceStepId : null,
        };
      }),
      ...(decided.reopened
        ? {
            reopened: `The fork starts at step ${decided.startOrder}, not ${fromOrder}: ${decided.reopened.reason}, so it is decided again.`,
          }
        : {}),
    };
  });
}

async function refuseSecondFork(
  tx: Transaction,
  ctx: ServiceContext,
  sourceId: string,
  fromStepId: string,
): Promise<void> {
  const [fork] = await tx
    .select({ id: researchPlans.id })
    .from(researchPlans)
    .where(
      and(
        eq(researchPlans.forkedFromPlanId, sourceId),
        eq(researchPlans.forkedFromStepId, fromStepId),
        eq(researchPlans.tenantId, ctx.tenantId),
      ),
    )
    .limit(1);
  if (fork) {
    throw new AppError(
      "CONFLICT",
      `Plan ${sourceId} was already forked from this step: plan ${fork.id}. Nothing was made.`,
      { forkPlanId: fork.id },
    );
  }
}

type StepMap = {
  old: string;
  new: string;
  carried: boolean;
  instructions: string | null;
  arguments: Record<string, unknown> | null;
  edited: boolean;
}[];

/**
 * The copy, in the database: the steps (carried ones whole, the others as
 * pending definitions with their edits), the conditions (a skip_to's target
 * renamed to the fork's step; verdicts kept only after a carried step), and
 * the carried steps' sources, claims, artifacts (store_research's, with the
 * step) and decided reviews with their decisions.
 */
async function copyPlan(
  tx: Transaction,
  ctx: ServiceContext,
  { sourceId, forkId, map, now }: { sourceId: string; forkId: string; map: StepMap; now: Date },
): Promise<void> {
  const steps = sql`jsonb_to_recordset(${jsonParam(map)}::jsonb) as m(old uuid, new uuid,
    carried boolean, instructions text, arguments jsonb, edited boolean)`;
  const at = now.toISOString();
  await tx.execute(sql`
    insert into plan_step (id, tenant_id, plan_id, step_order, step_type, instructions, status,
      result, result_summary, confidence, step_execution_report, output_formatting_notes,
      started_at, completed_at, attempt, tool, arguments, inputs, output_schema,
      carried_from_step_id, created_at, updated_at)
    select m.new, s.tenant_id, ${forkId}, s.step_order, s.step_type,
      coalesce(m.instructions, s.instructions),
      case when m.carried then s.status else 'pending' end,
      case when m.carried then s.result end, case when m.carried then s.result_summary end,
      case when m.carried then s.confidence end,
      case when m.carried then s.step_execution_report end,
      case when m.carried then s.output_formatting_notes end,
      case when m.carried then s.started_at end, case when m.carried then s.completed_at end,
      case when m.carried then s.attempt else 0 end,
      s.tool, case when m.edited then m.arguments else s.arguments end, s.inputs,
      s.output_schema, case when m.carried then s.id end, ${at}::timestamptz, ${at}::timestamptz
    from ${steps} join plan_step s on s.id = m.old
    where s.plan_id = ${sourceId} and s.tenant_id = ${ctx.tenantId}`);
  await tx.execute(sql`
    insert into plan_branching_condition (tenant_id, plan_id, after_step_id, position,
      condition_expression, if_true_action, action_params, evaluated_at, fired, created_at)
    select c.tenant_id, ${forkId}, m.new, c.position, c.condition_expression, c.if_true_action,
      case when target.new is null then c.action_params
        else jsonb_set(c.action_params, '{stepId}', to_jsonb(target.new::text)) end,
      case when m.carried then c.evaluated_at end, case when m.carried then c.fired end,
      ${at}::timestamptz
    from plan_branching_condition c join ${steps} on m.old = c.after_step_id
    left join jsonb_to_recordset(${jsonParam(map)}::jsonb) as target(old uuid, new uuid)
      on target.old::text = c.action_params->>'stepId'
    where c.plan_id = ${sourceId} and c.tenant_id = ${ctx.tenantId}`);
  await tx.execute(sql`
    insert into plan_source (tenant_id, plan_id, canonical_key, kind, href, title, extract,
      content_digest, first_step_id, first_read_at)
    select s.tenant_id, ${forkId}, s.canonical_key, s.kind, s.href, s.title, s.extract,
      s.content_digest, m.new, s.first_read_at
    from plan_source s join ${steps} on m.old = s.first_step_id and m.carried
    where s.plan_id = ${sourceId} and s.tenant_id = ${ctx.tenantId}`);
  await tx.execute(sql`
    insert into step_claim (tenant_id, plan_id, step_id, position, text, key_claim, supports,
      contradicts, created_at)
    select c.tenant_id, ${forkId}, m.new, c.position, c.text, c.key_claim, c.supports,
      c.contradicts, c.created_at
    from step_claim c join ${steps} on m.old = c.step_id and m.carried
    where c.plan_id = ${sourceId} and c.tenant_id = ${ctx.tenantId}`);
  await tx.execute(sql`
    insert into research_artifact (tenant_id, plan_id, step_id, artifact_type, title, content,
      content_text, confidence, source_urls, created_at)
    select a.tenant_id, ${forkId}, m.new, a.artifact_type, a.title, a.content, a.content_text,
      a.confidence, a.source_urls, a.created_at
    from research_artifact a join ${steps} on m.old = a.step_id and m.carried
    where a.plan_id = ${sourceId} and a.tenant_id = ${ctx.tenantId}`);
  await tx.execute(sql`
    with carried as (
      select r.*, gen_random_uuid() as new_id, m.new as new_step
      from review_request r join ${steps} on m.old = r.step_id and m.carried
      where r.plan_id = ${sourceId} and r.tenant_id = ${ctx.tenantId} and r.status = 'decided'
    ), reviews as (
      insert into review_request (id, tenant_id, plan_id, step_id, summary, questions,
        proposed_result, proposed_confidence, step_instructions, content_digest, status,
        requested_by_type, requested_by_id, requested_by_label, created_at, decided_at,
        assigned_user_id, assigned_role)
      select new_id, tenant_id, ${forkId}, new_step, summary, questions, proposed_result,
        proposed_confidence, step_instructions, content_digest, status, requested_by_type,
        requested_by_id, requested_by_label, created_at, decided_at, assigned_user_id,
        assigned_role
      from carried
    )
    insert into review_decision (tenant_id, review_request_id, plan_id, step_id, decision,
      feedback, decided_by_type, decided_by_id, decided_by_label, channel, decision_policy,
      review_digest, created_at)
    select d.tenant_id, carried.new_id, ${forkId}, carried.new_step, d.decision, d.feedback,
      d.decided_by_type, d.decided_by_id, d.decided_by_label, d.channel, d.decision_policy,
      d.review_digest, d.created_at
    from review_decision d join carried on carried.id = d.review_request_id`);
}
