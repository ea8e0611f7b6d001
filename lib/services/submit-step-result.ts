/**
 * submit_step_result (execution-loop.md, "Submitting results";
 * branching-conditions.md, "Evaluation Flow"). Locks the plan, then the step;
 * completes the step (auto-starting a still-pending one, the timing edge case),
 * evaluates the step's branching conditions, performs skip_to / fail, and derives
 * the plan status from all steps, with the audit rows in the same transaction.
 *
 * The loop calls this once per step, so it is two statements inside its
 * transaction: one that locks and reads everything the decision needs, and,
 * after the engine has decided, one that writes every change and its audit rows.
 */
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../db/client";
import { selectRows } from "../db/rows";
import { AppError } from "../plan-engine/app-error";
import { type BranchAction, evaluateBranching, stepsToSkip } from "../plan-engine/branch-actions";
import { buildConditionContext } from "../plan-engine/conditions";
import type { PlanStatus, StepStatus } from "../plan-engine/states";
import { derivePlanStatus, isTerminalPlanStatus, transitionStep } from "../plan-engine/transitions";
import { type AuditEntry, auditInsert } from "./audit";
import type { ServiceContext } from "./context";
import { planIdField, stepIdField } from "./fields";
import { planNotFound, planStatusAfter, stepNotFound } from "./plan-access";
import { parseInput } from "./validation";

export const stepExecutionReportInput = z
  .object({
    thinking: z
      .string()
      .max(200_000)
      .describe(
        "Reasoning narrative: hypotheses, decisions, discarded approaches, confidence factors.",
      ),
    webSearches: z
      .array(z.unknown())
      .describe("Exact queries, result counts, which results were used and why ([] if none)."),
    webFetches: z
      .array(z.unknown())
      .describe("URLs fetched, content summaries, extracted facts ([] if none)."),
    otherToolCalls: z
      .array(z.unknown())
      .describe("Other tool invocations with inputs and results ([] if none)."),
    subagents: z
      .array(z.unknown())
      .describe("Subagent delegations with task descriptions and report ids ([] if none)."),
  })
  .describe(
    "How the step was done. Every field is required; use [] for lists with nothing in them.",
  );

export const submitStepResultInput = z.object({
  planId: planIdField,
  stepId: stepIdField,
  result: z
    .record(z.string(), z.unknown())
    .describe(
      "The step's structured result as a JSON object; branching conditions read its fields as result.<field>.",
    ),
  resultSummary: z
    .string()
    .max(10_000)
    .optional()
    .describe("Two or three sentences a person can read in the plan view."),
  confidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe("Your confidence in the result, from 0 to 1 (conditions see 0 when omitted)."),
  stepExecutionReport: stepExecutionReportInput,
  outputFormattingNotes: z
    .string()
    .max(10_000)
    .optional()
    .describe("Notes for the final deliverable's formatting that this step taught you."),
});

export type FiredCondition = {
  conditionId: string;
  conditionExpression: string;
  action: BranchAction["type"];
  skippedStepIds?: string[];
  addStepsParams?: Record<string, unknown>;
};

export type SubmittedStep = {
  planId: string;
  stepId: string;
  stepOrder: number;
  stepStatus: "completed";
  planStatus: PlanStatus;
  conditionsEvaluated: number;
  firedConditions: FiredCondition[];
  hint: string;
};

type LockedForSubmit = {
  planId: string;
  planStatus: PlanStatus;
  stepId: string | null;
  stepOrder: number | null;
  stepStatus: StepStatus | null;
  startedAt: Date | string | null;
};

type ReadForSubmit = {
  conditions: {
    id: string;
    conditionExpression: string;
    ifTrueAction: string;
    actionParams: Record<string, unknown>;
  }[];
  steps: { id: string; stepOrder: number; status: StepStatus }[];
};

const conditionsOf = (ctx: ServiceContext, stepId: string) => sql`
  (select coalesce(jsonb_agg(jsonb_build_object(
      'id', c.id, 'conditionExpression', c.condition_expression,
      'ifTrueAction', c.if_true_action, 'actionParams', c.action_params
    ) order by c.position), '[]'::jsonb)
  from plan_branching_condition c
  where c.after_step_id = ${stepId}::uuid and c.tenant_id = ${ctx.tenantId}::uuid)`;

const statusesOf = (ctx: ServiceContext, planId: string) => sql`
  (select coalesce(jsonb_agg(jsonb_build_object(
      'id', s.id, 'stepOrder', s.step_order, 'status', s.status
    ) order by s.step_order), '[]'::jsonb)
  from plan_step s
  where s.plan_id = ${planId}::uuid and s.tenant_id = ${ctx.tenantId}::uuid)`;

function readStatuses(tx: Transaction, ctx: ServiceContext, planId: string) {
  return selectRows<Pick<ReadForSubmit, "steps">>(
    tx,
    sql`select ${statusesOf(ctx, planId)} as steps`,
  ).then(([row]) => row?.steps ?? []);
}

/**
 * Locks the plan row, then the step row (the step's lookup needs the locked
 * plan's id, so PostgreSQL takes them in that order), and reads the step's
 * conditions in their stored order and every step's status, not its result.
 *
 * A statement sees the data as of its start, which may be before it got the
 * lock. Every call that changes a plan's steps under an exclusive lock also
 * updates the plan row, so when the locked plan row is still the one the
 * statement's snapshot holds, the reads are current, and one statement does it
 * all. Otherwise the reads run again in a statement that starts after the lock.
 * The one change that can slip past (get_next_step starting a pending step
 * under a share lock) leaves the status derivation as it is and matters only
 * to skip_to, which reads the statuses again: `statusesMayLagClaims`.
 */
async function lockAndRead(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  stepId: string,
): Promise<(LockedForSubmit & ReadForSubmit & { statusesMayLagClaims: boolean }) | undefined> {
  const [locked] = await selectRows<
    LockedForSubmit & {
      fresh: boolean;
      conditions: ReadForSubmit["conditions"] | null;
      steps: ReadForSubmit["steps"] | null;
    }
  >(
    tx,
    sql`
    with plan as materialized (
      select id, status, xmin as version from research_plan
      where id = ${planId}::uuid and tenant_id = ${ctx.tenantId}::uuid
      for update
    ), step as materialized (
      select id, step_order, status, started_at from plan_step
      where id = ${stepId}::uuid and plan_id = (select id from plan)
        and tenant_id = ${ctx.tenantId}::uuid
      for update
    ), fresh as materialized (
      select plan.version = (select xmin from research_plan where id = ${planId}::uuid) as ok
      from plan
    )
    select plan.id as "planId", plan.status as "planStatus", step.id as "stepId",
      step.step_order as "stepOrder", step.status as "stepStatus", step.started_at as "startedAt",
      fresh.ok as fresh,
      case when fresh.ok then ${conditionsOf(ctx, stepId)} end as conditions,
      case when fresh.ok then ${statusesOf(ctx, planId)} end as steps
    from plan cross join fresh left join step on true`,
  );
  if (!locked) return undefined;
  if (locked.fresh && locked.conditions && locked.steps) {
    return {
      ...locked,
      conditions: locked.conditions,
      steps: locked.steps,
      statusesMayLagClaims: true,
    };
  }
  const [read] = await selectRows<ReadForSubmit>(
    tx,
    sql`select ${conditionsOf(ctx, stepId)} as conditions, ${statusesOf(ctx, planId)} as steps`,
  );
  return read && { ...locked, ...read, statusesMayLagClaims: false };
}

type Changes = {
  planId: string;
  step: {
    id: string;
    status: StepStatus;
    result: Record<string, unknown>;
    resultSummary: string | null;
    confidence: number | null;
    stepExecutionReport: unknown;
    outputFormattingNotes: string | null;
    startedAt: string;
  };
  verdicts: { id: string; fired: boolean }[];
  skipped: { ids: string[]; status: StepStatus }[];
  planStatus: PlanStatus;
  audit: AuditEntry[];
  now: string;
};

/** Every change the engine decided, and its audit rows, as one statement. */
function writeChanges(tx: Transaction, ctx: ServiceContext, changes: Changes): Promise<unknown> {
  const { step, now } = changes;
  const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;
  const parts: SQL[] = [
    sql`step_update as (
      update plan_step set status = ${step.status}::step_status, result = ${json(step.result)},
        result_summary = ${step.resultSummary}::text, confidence = ${step.confidence}::float8,
        step_execution_report = ${json(step.stepExecutionReport)},
        output_formatting_notes = ${step.outputFormattingNotes}::text,
        started_at = ${step.startedAt}::timestamptz, completed_at = ${now}::timestamptz,
        updated_at = ${now}::timestamptz
      where id = ${step.id}::uuid
    )`,
    sql`verdicts as (
      update plan_branching_condition c set evaluated_at = ${now}::timestamptz, fired = v.fired
      from jsonb_to_recordset(${json(changes.verdicts)}) as v(id uuid, fired boolean)
      where c.id = v.id
    )`,
    // The skip sets never include the submitted step (only steps after it), so
    // no row is changed twice by this statement.
    ...changes.skipped.map(
      ({ ids, status }, i) => sql`${sql.raw(`skip_${i}`)} as (
      update plan_step set status = ${status}::step_status, updated_at = ${now}::timestamptz
      where id in (select value::uuid from jsonb_array_elements_text(${json(ids)}))
        and status = 'pending'
    )`,
    ),
    sql`plan_update as (
      update research_plan set status = ${changes.planStatus}::plan_status,
        updated_at = ${now}::timestamptz,
        completed_at = case when ${isTerminalPlanStatus(changes.planStatus)}::boolean
          then ${now}::timestamptz else completed_at end
      where id = ${changes.planId}::uuid
    )`,
  ];
  return tx.execute(sql`with ${sql.join(parts, sql`, `)} ${auditInsert(ctx, changes.audit)}`);
}

export async function submitStepResult(
  ctx: ServiceContext,
  raw: z.input<typeof submitStepResultInput>,
): Promise<SubmittedStep> {
  const input = parseInput(submitStepResultInput, raw);
  return ctx.db.transaction(async (tx) => {
    const locked = await lockAndRead(tx, ctx, input.planId, input.stepId);
    if (!locked) throw planNotFound(input.planId);
    const plan = { id: locked.planId, status: locked.planStatus };
    if (isTerminalPlanStatus(plan.status)) {
      throw new AppError(
        "INVALID_TRANSITION",
        `Plan ${plan.id} is ${plan.status}, so no step result can be submitted. Call get_next_step to see what to do next.`,
        { planStatus: plan.status },
      );
    }
    if (locked.stepId === null || locked.stepOrder === null || locked.stepStatus === null) {
      throw stepNotFound(plan.id, input.stepId);
    }
    const step = { id: locked.stepId, stepOrder: locked.stepOrder, status: locked.stepStatus };
    if (step.status !== "in_progress" && step.status !== "pending") {
      throw new AppError(
        "INVALID_TRANSITION",
        `Step ${step.stepOrder} is ${step.status}, so it cannot take a result (only a pending or in-progress step can). ` +
          (step.status === "awaiting_input"
            ? "It is waiting for a person's review; call get_next_step later."
            : "Call get_next_step for the step to work on now."),
        { entity: "step", from: step.status, to: "completed" },
      );
    }
    const now = new Date().toISOString();
    const autoStarted = step.status === "pending";
    const started: StepStatus = autoStarted
      ? transitionStep("pending", "in_progress")
      : step.status;
    const completed = transitionStep(started, "completed");
    const { conditions } = locked;
    const audit: AuditEntry[] = [
      {
        eventType: "step_completed",
        planId: plan.id,
        stepId: step.id,
        payload: {
          stepOrder: step.stepOrder,
          confidence: input.confidence ?? null,
          resultSummary: input.resultSummary ?? null,
          autoStarted,
        },
      },
    ];

    const outcome = evaluateBranching(
      conditions,
      buildConditionContext({ confidence: input.confidence, result: input.result }),
    );
    const skips = outcome.fired.some((f) => f.action.type === "skip_to");
    const statuses =
      skips && locked.statusesMayLagClaims ? await readStatuses(tx, ctx, plan.id) : locked.steps;
    // With the plan row locked no other call changes this plan's steps until
    // commit, so these statuses, updated as the write will, are the stored ones.
    const steps = statuses.map((s) => (s.id === step.id ? { ...s, status: completed } : s));
    const firedIds = new Set(outcome.fired.map((fired) => fired.conditionId));
    // Conditions after a `fail` are not evaluated (spec step 4): they keep a null verdict.
    const failedAt = outcome.planFailed
      ? conditions.findIndex((c) => c.id === outcome.fired.at(-1)?.conditionId)
      : conditions.length - 1;
    const verdicts = conditions
      .slice(0, failedAt + 1)
      .map((c) => ({ id: c.id, fired: firedIds.has(c.id) }));

    const fired: FiredCondition[] = [];
    const skipped: Changes["skipped"] = [];
    let planStatus: PlanStatus = plan.status;
    for (const { conditionId, action } of outcome.fired) {
      const condition = conditions.find((c) => c.id === conditionId);
      const entry: FiredCondition = {
        conditionId,
        conditionExpression: condition?.conditionExpression ?? "",
        action: action.type,
      };
      if (action.type === "skip_to") {
        const skip = stepsToSkip(steps, step.id, action.targetStepId);
        if (skip.length > 0) {
          const status = transitionStep("pending", "skipped");
          skipped.push({ ids: skip, status });
          const skipSet = new Set(skip);
          for (const [index, s] of steps.entries()) {
            if (skipSet.has(s.id) && s.status === "pending") steps[index] = { ...s, status };
          }
          audit.push({
            eventType: "plan_modified",
            planId: plan.id,
            stepId: step.id,
            payload: {
              action: "branch_skipped_steps",
              conditionId,
              targetStepId: action.targetStepId,
              skippedStepIds: skip,
            },
          });
        }
        entry.skippedStepIds = skip;
      } else if (action.type === "add_steps") {
        entry.addStepsParams = { ...action.params };
      } else if (action.type === "fail") {
        planStatus = planStatusAfter(plan, "failed");
        audit.push({
          eventType: "plan_modified",
          planId: plan.id,
          stepId: step.id,
          payload: {
            action: "branch_failed_plan",
            conditionId,
            reason: action.reason ?? `condition "${entry.conditionExpression}" held`,
          },
        });
      }
      fired.push(entry);
    }
    if (!outcome.planFailed) {
      // A stalled plan whose slow step just finished resumes; "planning" only
      // when the step was submitted before get_next_step (the edge case).
      planStatus = planStatusAfter(plan, derivePlanStatus(steps.map((s) => s.status)));
    }

    await writeChanges(tx, ctx, {
      planId: plan.id,
      step: {
        id: step.id,
        status: completed,
        result: input.result,
        resultSummary: input.resultSummary ?? null,
        confidence: input.confidence ?? null,
        stepExecutionReport: input.stepExecutionReport,
        outputFormattingNotes: input.outputFormattingNotes ?? null,
        startedAt: locked.startedAt ? new Date(locked.startedAt).toISOString() : now,
      },
      verdicts,
      skipped,
      planStatus,
      audit,
      now,
    });

    const addSteps = fired.find((f) => f.action === "add_steps");
    return {
      planId: plan.id,
      stepId: step.id,
      stepOrder: step.stepOrder,
      stepStatus: "completed",
      planStatus,
      conditionsEvaluated: conditions.length,
      firedConditions: fired,
      hint:
        planStatus === "failed"
          ? "A branching condition failed the plan. Present what was gathered and where it stopped."
          : addSteps
            ? "A condition asks for more steps: call modify_plan with action add_steps, then get_next_step."
            : planStatus === "completed"
              ? "The plan is complete. Call get_next_step for the formatting notes, then deliver the output."
              : "Call get_next_step for the next step.",
    };
  });
}
