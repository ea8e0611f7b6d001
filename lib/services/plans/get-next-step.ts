/**
 * get_next_step (docs/execution-loop.md). Hands out the
 * first pending step of a plan to exactly one caller, however many pull at once:
 * the step is claimed with `FOR UPDATE SKIP LOCKED` on the partial index of
 * open steps, while the plan row is held for a claim (`PLAN_LOCK` in
 * lib/services/loop/plan-lock.ts) so concurrent pulls and submits do not queue
 * behind each other but do wait for any other change in progress.
 *
 * The common case, an executing plan with a pending step, is one statement and
 * so one round trip (see `claimFromExecutingPlan`); a plan just made is
 * started with its first step's claim in a second statement
 * (`startAndClaimStep`) unless Cairn runs that step itself. A completed or
 * failed plan is answered without a lock; every other case (a plan to resume,
 * a server step next, one awaiting review, no pending step) takes the
 * transaction below.
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import type { BindingSource } from "../../plan-engine/bindings";
import { isTerminalPlanStatus, transitionPlan } from "../../plan-engine/transitions";
import { type CompletedPlanRead, claimNextStep, startAndClaimStep } from "../loop/claim-next-step";
import { claimStep } from "../loop/claim-step";
import { applyDueReviewsOfPlan, type TimedOutReview } from "../reviews/deadline-state";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import {
  lockPlan,
  type PlanRow,
  planNotFound,
  setPlanStatusAndQueueEvent,
} from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import {
  awaitingStepsAnswer,
  noPendingSteps,
  type PlanForAnswer,
  readyAnswer,
  settledPlanAnswer,
  terminalPlanAnswer,
} from "./next-step-answers";
import { type NextStepWithInputs, resolveInputs, withInputs } from "./next-step-inputs";
import type { NextStep, ReadyStep } from "./next-step-output";
import { runServerSteps, type ServerStepRun } from "./run-server-steps";

export const getNextStepInput = z.object({ planId: planIdField });

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
  // Stale only because a change (`PLAN_LOCK.change`) committed while the claim
  // waited for the lock or just before it: a new statement sees it. Where such
  // changes keep coming the transaction below takes over.
  for (let retry = 0; retry < STALE_RETRIES && peeked.status === "stale"; retry += 1) {
    peeked = await claimFromExecutingPlan(ctx, planId);
  }
  const { reviewDue, timedOut } = peeked.deadlines;
  if (peeked.status === "ready") {
    return { answer: await withInputs(ctx, peeked.ready, peeked.inputs), timedOut };
  }
  if (reviewDue && !options.ignoreDue) return { timedOut };
  // A plan just made: started with its first step's claim in one statement
  // rather than the transaction below (seven round trips). The claim above
  // looks at no step of a plan that is not executing, so only this statement
  // learns whether Cairn runs the first step itself; then, or when another
  // call started the plan first, it changes nothing and the transaction runs.
  if (peeked.status === "not_claimed" && peeked.plan.status === "planning" && !peeked.paused) {
    const started = await startAndClaimStep(ctx.db, ctx, planId, new Date().toISOString());
    const ready = started && readyAnswer(planId, started);
    if (ready) return { answer: await withInputs(ctx, ready, started.inputs), timedOut };
  }
  // A finished plan's answer needs no lock: nothing is written, and the plan
  // is answered as one snapshot held it (a completed plan re-opened later by
  // retry_step is the next call's); a completed one's was read by the claim.
  if (isTerminalPlanStatus(peeked.plan.status)) {
    return {
      answer: await terminalPlanAnswer(ctx.db, ctx, peeked.plan, peeked.completedRead),
      timedOut,
    };
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
      /** A completed plan's answer's read (`COMPLETED_PLAN_READ`). */
      completedRead: CompletedPlanRead | null;
      deadlines: Deadlines;
    }
> {
  const row = await claimNextStep(ctx.db, ctx, planId, new Date().toISOString());
  if (!row) throw planNotFound(planId);
  const deadlines = { reviewDue: row.reviewDue, timedOut: row.timedOut };
  // The plan row as locked: the newest one when a change made the claim stale
  // (key share waits for or re-reads a row a change locked and updated); a
  // submit's newer row is not waited for, and the claim is then as if it had
  // come first (PLAN_LOCK), so its status may still read `executing`. When the
  // lock found the plan no longer open (finished or gone), the row as the
  // snapshot held it: stale, and never terminal.
  const plan = {
    id: planId,
    status: row.planStatus,
    outputFormattingNotes: row.planFormattingNotes,
  };
  const flags = {
    plan,
    serverNext: row.serverNext,
    paused: row.paused,
    completedRead: row.completedRead,
    deadlines,
  };
  if (!row.current) return { status: "stale", ...flags };
  const ready = readyAnswer(planId, row);
  return ready
    ? { status: "ready", ready, inputs: row.inputs, deadlines }
    : { status: "not_claimed", ...flags };
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
  let bindingSource: BindingSource | undefined;
  if (exclusive) {
    const run = await runServerSteps(tx, ctx, plan);
    serverSteps = run.ran.length > 0 ? run.ran : undefined;
    bindingSource = run.bindingSource;
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
    return { ...ready, serverSteps, inputsToResolve: claimed.inputs, bindingSource };
  }
  return { ...(await noPendingSteps(tx, plan)), serverSteps };
}
