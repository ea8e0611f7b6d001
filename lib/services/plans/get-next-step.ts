/**
 * get_next_step (docs/execution-loop.md). Hands out the
 * first pending step of a plan to exactly one caller, however many pull at once:
 * the step is claimed with `FOR UPDATE SKIP LOCKED` on the partial index of
 * pending steps, while the plan row is held in `share` mode so concurrent pulls
 * do not queue behind each other but do wait for a status change in progress.
 *
 * The common case, an executing plan with a pending step, is one statement and
 * so one round trip (see `claimFromExecutingPlan`). A completed or failed plan
 * is answered without a lock; every other case (a plan to start or resume, one
 * awaiting review, no pending step) takes the transaction below.
 */
import "server-only";
import { and, asc, desc, eq, isNotNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor, Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { planSteps, reviewRequests, skillExecutions } from "../../db/schema";
import { sqlLiterals } from "../../db/statement";
import { type PauseReason, resolveBindings } from "../../plan-engine/bindings";
import { cancelledPlanMessage } from "../../plan-engine/cancel";
import { UNDECIDED_CHECKPOINT_STATUSES } from "../../plan-engine/checkpoint-guard";
import type { AwaitingSteps } from "../../plan-engine/loop";
import { TIMEOUT_ACTIONS } from "../../plan-engine/review-deadlines";
import { metadataText } from "../../plan-engine/skill-executions";
import { type PlanStatus, STEP_STATUSES } from "../../plan-engine/states";
import { isTerminalPlanStatus, transitionPlan } from "../../plan-engine/transitions";
import { type ClaimedStep, claimNextStep } from "../loop/claim-next-step";
import { claimStep } from "../loop/claim-step";
import { approvalsShown } from "../reviews/approvals";
import { applyDueReviewsOfPlan, type TimedOutReview } from "../reviews/review-deadlines";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import {
  approvalsOutput,
  awaitingStepsOutput,
  cancellationOutput,
  pauseReasonOutput,
  planStatus,
  stepType,
} from "../shared/output-fields";
import {
  getPlan,
  lockPlan,
  type PlanRow,
  planNotFound,
  setPlanStatusAndQueueEvent,
} from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { runServerSteps, type ServerStepRun } from "./run-server-steps";

export const getNextStepInput = z.object({ planId: planIdField });

/** The answers' statuses; `NextStep` below is the answer of each. */
const NEXT_STEP_STATUSES = [
  "ready",
  "plan_complete",
  "plan_failed",
  "plan_cancelled",
  "awaiting_review",
  "awaiting_steps",
  "paused",
  "no_pending_steps",
] as const;

/** The step a ready answer hands out. */
const handedOutStepOutput = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  stepType,
  instructions: z.string(),
  // 1 for the first hand-out; more when the step is handed out again.
  attempt: z.number(),
  // Until then the step is yours; after it, get_next_step may hand it to another caller.
  leaseExpiresAt: z.string(),
  // The step's inputs with their bindings resolved (absent when it has none).
  inputs: z.record(z.string(), z.unknown()).optional(),
  // Bindings of `inputs` that could not be resolved (left out of `inputs`).
  unresolvedInputs: z.array(z.string()).optional(),
});

const stepFormattingNotesOutput = z.array(
  z.object({ stepId: z.string(), stepOrder: z.number(), notes: z.string() }),
);

/** The review an awaiting_review answer waits on. */
const pendingReviewOutput = z.object({
  reviewRequestId: z.string(),
  stepId: z.string(),
  summary: z.string(),
  // What an approve completes the step with, and the digest a decision binds to.
  proposedResult: z.record(z.string(), z.unknown()).optional(),
  proposedConfidence: z.number().optional(),
  contentDigest: z.string(),
  // When Cairn acts itself, and how (absent without a deadline).
  dueAt: z.string().optional(),
  onTimeout: z.string().optional(),
  // Set when the deadline handed the review to the admins.
  escalatedAt: z.string().optional(),
  // Needing several people's approval: k of N and who approved.
  approvals: approvalsOutput.optional(),
});

/**
 * The answer on the wire (the MCP tool's output schema). An MCP output schema
 * is one object, so this lists the fields of every status's answer, each
 * optional but the ones all share; `NextStep` keeps the answer of each status
 * apart for callers, and the tool's definition checks that each one fits here.
 */
export const nextStepOutput = z.object({
  status: z.enum(NEXT_STEP_STATUSES),
  planId: z.string(),
  hint: z.string(),
  planStatus: planStatus.optional(),
  step: handedOutStepOutput.optional(),
  serverSteps: z
    .array(
      z.object({
        stepId: z.string(),
        stepOrder: z.number(),
        tool: z.string(),
        status: z.enum(["completed", "failed"]),
      }),
    )
    .optional(),
  pauseReason: pauseReasonOutput.optional(),
  totalSteps: z.number().optional(),
  outputMediaType: z.string().nullable().optional(),
  outputFormattingInstructions: z.string().nullable().optional(),
  planFormattingNotes: z.string().nullable().optional(),
  stepFormattingNotes: stepFormattingNotesOutput.optional(),
  review: pendingReviewOutput.nullable().optional(),
  reviewTimedOut: z
    .object({
      reviewRequestId: z.string(),
      stepId: z.string(),
      action: z.enum(TIMEOUT_ACTIONS),
      reason: z.string(),
      at: z.string(),
    })
    .optional(),
  inProgressCount: z.number().optional(),
  failedCount: z.number().optional(),
  nextLeaseExpiresAt: z.string().nullable().optional(),
  condition: awaitingStepsOutput.optional(),
  cancellation: cancellationOutput.optional(),
});

export type NextStep =
  | {
      status: "ready";
      planId: string;
      planStatus: "executing";
      step: z.infer<typeof handedOutStepOutput>;
      totalSteps: number;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "plan_complete";
      planId: string;
      outputMediaType: string | null;
      outputFormattingInstructions: string | null;
      planFormattingNotes: string | null;
      stepFormattingNotes: z.infer<typeof stepFormattingNotesOutput>;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | { status: "plan_failed"; planId: string; serverSteps?: ServerStepRun[]; hint: string }
  | {
      status: "plan_cancelled";
      planId: string;
      cancellation: z.infer<typeof cancellationOutput>;
      hint: string;
    }
  | {
      status: "paused";
      planId: string;
      planStatus: PlanStatus;
      /** Why Cairn could not run the next server-run step, and the call that unblocks it. */
      pauseReason: PauseReason;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "awaiting_review";
      planId: string;
      review: z.infer<typeof pendingReviewOutput> | null;
      /** Set when the plan is also paused on a server-run step (from before reviews on a paused plan were refused). */
      pauseReason?: PauseReason;
      hint: string;
    }
  | {
      status: "awaiting_steps";
      planId: string;
      planStatus: PlanStatus;
      /** The fired add_steps condition the plan waits on. */
      condition: AwaitingSteps;
      serverSteps?: ServerStepRun[];
      hint: string;
    }
  | {
      status: "no_pending_steps";
      planId: string;
      planStatus: PlanStatus;
      inProgressCount: number;
      failedCount: number;
      /** When the first lease of a step in progress runs out (it is then handed out again). */
      nextLeaseExpiresAt: string | null;
      serverSteps?: ServerStepRun[];
      hint: string;
    };

/**
 * The plan's due reviews are applied first (docs/reviews.md): the claim's own
 * statement reports them, and only a plan with a due review pays for applying
 * it and claiming again. When the plan's latest review was decided or
 * escalated by its deadline, the answer says so in `reviewTimedOut`, with the
 * reason.
 */
export async function getNextStep(
  ctx: ServiceContext,
  raw: z.input<typeof getNextStepInput>,
): Promise<NextStep & { reviewTimedOut?: TimedOutReview }> {
  const { planId } = parseInput(getNextStepInput, raw);
  let next = await nextStepOf(ctx, planId);
  if (!next.answer) {
    await applyDueReviewsOfPlan(ctx, planId);
    // A review still due now (another instance is applying it, or applying it
    // failed and is tried again later) is answered as the plan stands.
    next = await nextStepOf(ctx, planId, { ignoreDue: true });
  }
  if (!next.answer) throw planNotFound(planId);
  return next.timedOut ? { ...next.answer, reviewTimedOut: next.timedOut } : next.answer;
}

type NextStepOutcome = {
  /** Undefined when a review fell due: the caller applies it and asks again. */
  answer?: NextStep;
  timedOut: TimedOutReview | null;
};

async function nextStepOf(
  ctx: ServiceContext,
  planId: string,
  options: { ignoreDue?: boolean } = {},
): Promise<NextStepOutcome> {
  let peeked = await claimFromExecutingPlan(ctx, planId);
  // Stale only because a status change committed while the claim waited for
  // the lock: a new statement sees it. Where such changes keep coming (many
  // agents submitting to one plan) the transaction below takes over.
  for (let retry = 0; retry < STALE_RETRIES && peeked.status === "stale"; retry += 1) {
    peeked = await claimFromExecutingPlan(ctx, planId);
  }
  const { reviewDue, timedOut } = peeked.deadlines;
  if (peeked.status === "ready") {
    return { answer: await withInputs(ctx, peeked.ready, peeked.inputs), timedOut };
  }
  if (reviewDue && !options.ignoreDue) return { timedOut };
  // A completed or failed plan never changes again, so its answer needs no lock.
  if (isTerminalPlanStatus(peeked.plan.status)) {
    return { answer: await terminalPlanAnswer(ctx.db, ctx, peeked.plan), timedOut };
  }
  // A plan that must change status (planning/stalled -> executing) or whose
  // next step Cairn runs itself is locked exclusively, so no two callers run a
  // server step twice; an executing plan otherwise only in share mode, so
  // pulls run side by side.
  const exclusive =
    peeked.serverNext ||
    peeked.paused ||
    peeked.plan.status === "planning" ||
    peeked.plan.status === "stalled";
  for (let held = exclusive; ; held = true) {
    const lockedAs = held;
    const outcome = await ctx.db.transaction(async (tx) => {
      const plan = await lockPlan(tx, ctx, planId, lockedAs ? "update" : "share");
      const settled = await settledPlanAnswer(tx, ctx, plan);
      if (settled) return settled;
      if (!lockedAs && plan.status !== "executing") return "retry" as const;
      return claimInTransaction(tx, ctx, plan, lockedAs);
    });
    // "retry": the plan changed between the peek and the lock, or a server step
    // turned out to be next; the second round holds the plan exclusively.
    if (outcome !== "retry") {
      return { answer: await resolveInputs(ctx, outcome), timedOut };
    }
  }
}

type ReadyStep = Extract<NextStep, { status: "ready" }>;

const STALE_RETRIES = 3;

type Deadlines = { reviewDue: boolean; timedOut: TimedOutReview | null };

/** get_next_step's one-statement claim (lib/services/loop/claim-next-step.ts), read into an answer. */
async function claimFromExecutingPlan(
  ctx: ServiceContext,
  planId: string,
): Promise<
  | {
      status: "ready";
      ready: ReadyStep;
      inputs: Record<string, unknown> | null;
      deadlines: Deadlines;
    }
  | {
      status: "stale" | "not_claimed";
      plan: PlanForAnswer;
      serverNext: boolean;
      paused: boolean;
      deadlines: Deadlines;
    }
> {
  const row = await claimNextStep(ctx.db, ctx, planId, new Date().toISOString());
  if (!row) throw planNotFound(planId);
  const deadlines = { reviewDue: row.reviewDue, timedOut: row.timedOut };
  // The locked plan row is the newest one, stale snapshot or not.
  const plan = {
    id: planId,
    status: row.planStatus,
    outputFormattingNotes: row.planFormattingNotes,
  };
  const flags = { plan, serverNext: row.serverNext, paused: row.paused, deadlines };
  if (!row.current) return { status: "stale", ...flags };
  const ready = readyAnswer(planId, row);
  return ready
    ? { status: "ready", ready, inputs: row.inputs, deadlines }
    : { status: "not_claimed", ...flags };
}

/** The plan fields an answer other than a hand-out is built from. */
type PlanForAnswer = Pick<PlanRow, "id" | "status" | "outputFormattingNotes">;

/** The answer for a completed, failed or cancelled plan. */
async function terminalPlanAnswer(
  db: Executor,
  ctx: ServiceContext,
  plan: PlanForAnswer,
): Promise<NextStep> {
  if (plan.status === "completed") return planComplete(db, ctx, plan);
  if (plan.status === "cancelled") {
    const { cancellation } = await getPlan(db, ctx, plan.id);
    return {
      status: "plan_cancelled",
      planId: plan.id,
      cancellation: cancellation ?? { by: "unknown", reason: "not recorded", at: "" },
      hint: `${cancelledPlanMessage(plan.id, cancellation)} No step is handed out or accepted any more; tell the user, and present what was gathered (get_research_context) if that helps.`,
    };
  }
  return {
    status: "plan_failed",
    planId: plan.id,
    hint: "The plan failed (a branching condition or a user's reject). Call get_research_context to see why and present what was gathered.",
  };
}

/** The answer for a plan that hands out no step: completed, failed or awaiting review. */
async function settledPlanAnswer(
  tx: Transaction,
  ctx: ServiceContext,
  plan: PlanForAnswer & Pick<PlanRow, "pauseReason">,
): Promise<NextStep | undefined> {
  if (isTerminalPlanStatus(plan.status)) return terminalPlanAnswer(tx, ctx, plan);
  if (plan.status === "awaiting_review") {
    const [review] = await tx
      .select()
      .from(reviewRequests)
      .where(and(eq(reviewRequests.planId, plan.id), eq(reviewRequests.status, "pending")))
      .orderBy(desc(reviewRequests.createdAt))
      .limit(1);
    const approvals = review
      ? (await approvalsShown(tx, ctx.tenantId, [review.id])).get(review.id)
      : undefined;
    return {
      status: "awaiting_review",
      planId: plan.id,
      review: review
        ? {
            reviewRequestId: review.id,
            stepId: review.stepId,
            summary: review.summary,
            ...(review.proposedResult ? { proposedResult: review.proposedResult } : {}),
            ...(review.proposedConfidence !== null
              ? { proposedConfidence: review.proposedConfidence }
              : {}),
            contentDigest: review.contentDigest,
            ...(review.dueAt ? { dueAt: review.dueAt.toISOString() } : {}),
            ...(review.onTimeout ? { onTimeout: review.onTimeout } : {}),
            ...(review.escalatedAt ? { escalatedAt: review.escalatedAt.toISOString() } : {}),
            ...(approvals ? { approvals } : {}),
          }
        : null,
      // Every reason the plan waits is named: a pause too, with its own call.
      ...(plan.pauseReason ? { pauseReason: plan.pauseReason } : {}),
      hint:
        "A person must answer the checkpoint in Cairn first. Stop here and resume later with get_research_context and get_next_step." +
        (plan.pauseReason
          ? ` The plan is also paused: ${plan.pauseReason.message} Once the review is decided, answer the pause with pauseReason.suggestedTool.`
          : ""),
    };
  }
  return undefined;
}

async function planComplete(
  tx: Executor,
  ctx: ServiceContext,
  plan: PlanForAnswer,
): Promise<NextStep> {
  const [[execution], notes, failed] = await Promise.all([
    tx
      .select({ metadata: skillExecutions.metadata })
      .from(skillExecutions)
      .where(and(eq(skillExecutions.planId, plan.id), eq(skillExecutions.tenantId, ctx.tenantId)))
      .orderBy(desc(skillExecutions.createdAt))
      .limit(1),
    tx
      .select({
        stepId: planSteps.id,
        stepOrder: planSteps.stepOrder,
        notes: planSteps.outputFormattingNotes,
      })
      .from(planSteps)
      .where(
        and(
          eq(planSteps.planId, plan.id),
          eq(planSteps.status, "completed"),
          isNotNull(planSteps.outputFormattingNotes),
        ),
      )
      .orderBy(asc(planSteps.stepOrder)),
    tx
      .select({ stepOrder: planSteps.stepOrder })
      .from(planSteps)
      .where(
        and(
          eq(planSteps.planId, plan.id),
          eq(planSteps.tenantId, ctx.tenantId),
          eq(planSteps.status, "failed"),
        ),
      )
      .orderBy(asc(planSteps.stepOrder)),
  ]);
  // A plan that ended with a failed step is said so, with the way to re-open it.
  const failedNote =
    failed.length > 0
      ? ` Step ${failed.map((s) => s.stepOrder).join(", ")} failed; modify_plan retry_step on it re-opens the plan if that work should still be done.`
      : "";
  return {
    status: "plan_complete",
    planId: plan.id,
    outputMediaType: metadataText(execution?.metadata, "outputMediaType"),
    outputFormattingInstructions: metadataText(execution?.metadata, "outputFormattingInstructions"),
    planFormattingNotes: plan.outputFormattingNotes,
    stepFormattingNotes: notes.map((note) => ({ ...note, notes: note.notes ?? "" })),
    hint: `Every step is done.${failedNote} Call get_research_context for all results, write the deliverable in the requested format, and store it with store_research_output (it checks the citations against the plan's sources); then present it to the user and record their reaction with submit_research_feedback.`,
  };
}

/**
 * Hands out the plan's next agent step. With the plan held exclusively it first
 * runs the server steps next in line (`runServerSteps`); in share mode, a
 * server step next in line sends the caller back for the exclusive lock.
 */
async function claimInTransaction(
  tx: Transaction,
  ctx: ServiceContext,
  locked: PlanRow,
  exclusive: boolean,
): Promise<NextStepWithInputs | "retry"> {
  let plan = locked;
  let serverSteps: ServerStepRun[] | undefined;
  if (exclusive) {
    const run = await runServerSteps(tx, ctx, plan);
    serverSteps = run.ran.length > 0 ? run.ran : undefined;
    plan = { ...plan, status: run.planStatus, awaitingSteps: run.awaitingSteps };
    if (run.pause) {
      return {
        status: "paused",
        planId: plan.id,
        planStatus: plan.status,
        pauseReason: run.pause,
        serverSteps,
        hint: `${run.pause.message} The call that unblocks the plan is in pauseReason.suggestedTool.`,
      };
    }
    if (isTerminalPlanStatus(plan.status)) {
      return { ...(await terminalPlanAnswer(tx, ctx, plan)), serverSteps } as NextStep;
    }
    if (run.waiting) {
      return {
        ...(await noPendingSteps(tx, plan)),
        serverSteps,
        hint: `Step ${run.waiting.stepOrder} is run by Cairn and needs the result of step ${run.waiting.onStepOrder}, which is still in progress: finish that step with submit_step_result, then call get_next_step.`,
      };
    }
  }
  // A fired add_steps holds every hand-out until the agent answers it.
  if (plan.awaitingSteps) return awaitingStepsAnswer(plan, plan.awaitingSteps, serverSteps);
  const now = new Date();
  const claimed = await claimStep(tx, ctx, plan.id, plan.status, now.toISOString());
  if (claimed?.serverNext && !exclusive) return "retry";
  const ready = claimed && readyAnswer(plan.id, claimed);
  if (ready) {
    if (plan.status !== "executing") {
      await setPlanStatusAndQueueEvent(tx, plan, transitionPlan(plan.status, "executing"), now);
    }
    return { ...ready, serverSteps, inputsToResolve: claimed.inputs };
  }
  return { ...(await noPendingSteps(tx, plan)), serverSteps };
}

/** The answer while a fired add_steps holds the plan: why, and the two calls that answer it. */
function awaitingStepsAnswer(
  plan: Pick<PlanRow, "id" | "status">,
  awaiting: NonNullable<PlanRow["awaitingSteps"]>,
  serverSteps: ServerStepRun[] | undefined,
): NextStep {
  return {
    status: "awaiting_steps",
    planId: plan.id,
    planStatus: plan.status,
    serverSteps,
    condition: awaiting,
    hint: `Step ${awaiting.stepOrder}'s condition "${awaiting.conditionExpression}" asks for more steps, and no further step is handed out until you answer it: call modify_plan({ planId: "${plan.id}", action: "add_steps", insertAfterOrder: ${awaiting.stepOrder}, steps: [...], modificationRationale }) (see condition.params), or modify_plan with action "decline_add_steps" if none are needed.`,
  };
}

async function noPendingSteps(
  tx: Transaction,
  plan: Pick<PlanRow, "id" | "status">,
): Promise<Extract<NextStep, { status: "no_pending_steps" }>> {
  const [counts] = await tx
    .select({
      inProgress: sql<number>`count(*) filter (where ${planSteps.status} = 'in_progress')::int`,
      checkpointInProgress: sql<
        number | null
      >`min(${planSteps.stepOrder}) filter (where ${planSteps.status} = 'in_progress' and ${planSteps.stepType} = 'checkpoint')`,
      inProgressCheckpoints: sql<number>`count(*) filter (where ${planSteps.status} = 'in_progress' and ${planSteps.stepType} = 'checkpoint')::int`,
      failed: sql<number>`count(*) filter (where ${planSteps.status} = 'failed')::int`,
      nextLease: sql<
        string | null
      >`min(${planSteps.leaseExpiresAt}) filter (where ${planSteps.status} = 'in_progress')`,
      heldAt: sql<
        number | null
      >`min(${planSteps.stepOrder}) filter (where ${planSteps.stepType} = 'checkpoint' and ${planSteps.status}::text in (${sql.raw(sqlLiterals(UNDECIDED_CHECKPOINT_STATUSES))}))`,
      lastPending: sql<
        number | null
      >`max(${planSteps.stepOrder}) filter (where ${planSteps.status} = 'pending')`,
    })
    .from(planSteps)
    .where(eq(planSteps.planId, plan.id));
  const nextLease = counts?.nextLease ? new Date(counts.nextLease).toISOString() : null;
  return {
    status: "no_pending_steps",
    planId: plan.id,
    planStatus: plan.status,
    inProgressCount: counts?.inProgress ?? 0,
    failedCount: counts?.failed ?? 0,
    nextLeaseExpiresAt: nextLease,
    hint:
      `No step is waiting. ${finishInProgressHint(counts)} A failed step can be retried with modify_plan (action retry_step).` +
      (nextLease
        ? ` A step in progress whose lease runs out (first at ${nextLease}) is handed out again by get_next_step.`
        : "") +
      // Named only when it holds a step back.
      (counts?.heldAt != null && (counts.lastPending ?? 0) > counts.heldAt
        ? ` Step ${counts.heldAt} is a checkpoint nobody has decided yet: the steps after it are handed out once a person has decided it (the agent holding it puts it up with request_user_review).`
        : ""),
  };
}

type NextStepWithInputs =
  | Exclude<NextStep, ReadyStep>
  | (ReadyStep & { inputsToResolve?: Record<string, unknown> | null });

/** A ready step's inputs, with their bindings resolved from the plan as it is now. */
async function withInputs(
  ctx: ServiceContext,
  ready: ReadyStep,
  inputs: Record<string, unknown> | null,
): Promise<ReadyStep> {
  if (!inputs) return ready;
  const [plan] = await selectRows(
    ctx.db,
    z.object({ researchQuestion: z.string(), steps: z.array(bindingSourceRow) }),
    sql`select p.research_question as "researchQuestion",
      coalesce((select jsonb_agg(jsonb_build_object('stepId', s.id, 'stepOrder', s.step_order,
        'status', s.status, 'result', s.result, 'tool', s.tool))
        from plan_step s where s.plan_id = p.id), '[]'::jsonb) as steps
    from research_plan p where p.id = ${ready.planId}::uuid and p.tenant_id = ${ctx.tenantId}::uuid`,
  );
  if (!plan) return ready;
  const resolved = resolveBindings(inputs, {
    researchQuestion: plan.researchQuestion,
    steps: new Map(plan.steps.map((s) => [s.stepOrder, s])),
  });
  const step = { ...ready.step, inputs: resolved.value as Record<string, unknown> };
  if (resolved.unresolved.length > 0) {
    step.unresolvedInputs = resolved.unresolved.map((u) => u.binding);
  }
  return { ...ready, step };
}

const bindingSourceRow = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  status: z.enum(STEP_STATUSES),
  result: z.unknown(),
  tool: z.string().nullable(),
});

async function resolveInputs(ctx: ServiceContext, outcome: NextStepWithInputs): Promise<NextStep> {
  if (outcome.status !== "ready") return outcome;
  const { inputsToResolve, ...ready } = outcome;
  return withInputs(ctx, ready, inputsToResolve ?? null);
}

function readyAnswer(planId: string, row: ClaimedStep): ReadyStep | undefined {
  if (row.stepId === null || row.stepOrder === null || row.stepType === null) return undefined;
  const attempt = row.attempt ?? 1;
  return {
    status: "ready",
    planId,
    planStatus: "executing",
    step: {
      stepId: row.stepId,
      stepOrder: row.stepOrder,
      stepType: row.stepType,
      instructions: row.instructions ?? "",
      attempt,
      leaseExpiresAt: new Date(row.leaseExpiresAt ?? Date.now()).toISOString(),
    },
    totalSteps: row.totalSteps,
    hint:
      (attempt > 1
        ? "This step was handed out before and nobody finished it (or a reviewer asked for a redo: see the User feedback in its instructions). "
        : "") +
      (row.stepOrder > 1
        ? "Call get_step_context for earlier results if you need them, do the work, then "
        : "Do the work, then ") +
      finishStepHint(row.stepType),
  };
}

/**
 * How the steps in progress end: a checkpoint only with a review (a result for
 * one is refused where only people decide), the others with a result.
 */
function finishInProgressHint(
  counts:
    | { inProgress: number; inProgressCheckpoints: number; checkpointInProgress: number | null }
    | undefined,
): string {
  const checkpoints = counts?.inProgressCheckpoints ?? 0;
  if (checkpoints === 0) return "Finish the steps in progress with submit_step_result.";
  const review = `the agent holding it puts it up with request_user_review (a proposedResult is optional), and a person decides it`;
  if (checkpoints === counts?.inProgress) {
    return checkpoints === 1
      ? `Step ${counts.checkpointInProgress} in progress is a checkpoint: ${review}.`
      : `The steps in progress are checkpoints: for each, ${review}.`;
  }
  return `Finish the steps in progress: a checkpoint (the first is step ${counts?.checkpointInProgress}) with request_user_review (a proposedResult is optional), the others with submit_step_result.`;
}

/**
 * How the agent finishes the step handed out: a checkpoint is a pause for a
 * person, so it ends with a review (where only people decide, a result alone
 * is refused: docs/reviews.md).
 */
function finishStepHint(stepType: string): string {
  return stepType === "checkpoint"
    ? "call request_user_review with this stepId, what you found as summary and the result you ask the person to accept as proposedResult, if you have one that meets the step's outputSchema (left out, the person enters the result when they approve): a person's decision completes the step. Request it before the lease runs out."
    : "call submit_step_result with this stepId before the lease runs out.";
}
