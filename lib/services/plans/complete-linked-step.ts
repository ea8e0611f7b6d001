/**
 * A tool call linked to a paused server-run step (`completesStep`, named in a
 * pause reason's suggested call): the agent runs the step's tool itself, with
 * what was missing filled in, and Cairn records the tool's result as the
 * step's result, as if it had run it; the plan then goes on. The link is
 * checked before the tool runs, so a wrong link costs no side effect.
 */
import "server-only";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { samePlan, sameTenant } from "../../db/same-tenant";
import { planSteps, researchPlans, reviewRequests } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { checkNotHeldByCheckpoint } from "../../plan-engine/checkpoint-guard";
import { checkNotHeldByReview } from "../../plan-engine/review-request";
import type { PlanStatus } from "../../plan-engine/states";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import { pendingReviewsOf } from "../reviews/pending-review";
import type { ServiceContext } from "../shared/context";
import { planIdField, stepIdField } from "../shared/fields";
import { loadCheckpoints } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { modifyPlan } from "./modify-plan";
import { submitStepResult } from "./submit-step-result";

export const completesStepField = z
  .object({ planId: planIdField, stepId: stepIdField })
  .optional()
  .describe("The paused server-run step this completes (pauseReason).");

const linkInput = z.object({ completesStep: completesStepField });

export type LinkedStep = { planId: string; stepId: string };
export type CompletedStep = { stepId: string; stepOrder: number; planStatus: PlanStatus };

export async function checkLinkedStep(
  ctx: ServiceContext,
  link: LinkedStep,
  tool: string,
): Promise<void> {
  const [step] = await ctx.db
    .select({
      tool: planSteps.tool,
      status: planSteps.status,
      stepOrder: planSteps.stepOrder,
      planStatus: researchPlans.status,
      pauseReason: researchPlans.pauseReason,
    })
    .from(planSteps)
    .innerJoin(researchPlans, eq(researchPlans.id, planSteps.planId))
    .where(
      and(
        eq(planSteps.id, link.stepId),
        samePlan(planSteps.planId, link.planId),
        sameTenant(planSteps.tenantId, ctx.tenantId),
      ),
    );
  if (!step) {
    throw new AppError(
      "NOT_FOUND",
      `completesStep: plan ${link.planId} has no step ${link.stepId}. Nothing was run.`,
      { field: "completesStep" },
    );
  }
  if (step.tool !== tool) {
    throw new AppError(
      "VALIDATION_ERROR",
      `completesStep: step ${step.stepOrder} is ${step.tool ? `run with ${step.tool}` : "an agent step"}, not ${tool}; nothing was run. Submit an agent step's result with submit_step_result.`,
      { field: "completesStep" },
    );
  }
  // An ended plan (cancelled above all) takes no result: refused before the tool runs and stores anything.
  if (isTerminalPlanStatus(step.planStatus)) {
    throw new AppError(
      "INVALID_TRANSITION",
      `completesStep: plan ${link.planId} is ${step.planStatus}, so its steps take no result; nothing was run. Call get_next_step to see why.`,
      { field: "completesStep", planStatus: step.planStatus },
    );
  }
  // A waiting review, and a checkpoint nobody has decided, hold the steps
  // after them: refused before the tool runs.
  const reviews = await ctx.db
    .select({
      id: reviewRequests.id,
      stepId: reviewRequests.stepId,
      stepOrder: planSteps.stepOrder,
    })
    .from(reviewRequests)
    .innerJoin(planSteps, eq(planSteps.id, reviewRequests.stepId))
    .where(pendingReviewsOf(link.planId, ctx.tenantId));
  checkNotHeldByReview(
    {
      id: link.planId,
      steps: reviews.map((r) => ({
        id: r.stepId,
        stepOrder: r.stepOrder,
        status: "awaiting_input",
      })),
      pendingReviews: reviews,
    },
    step,
  );
  const checkpoints = await loadCheckpoints(ctx.db, ctx, link.planId);
  checkNotHeldByCheckpoint({ id: link.planId, steps: checkpoints }, step);
  // A link answers a pause (its suggested call names the step) or a step whose
  // tool failed; a pending step Cairn has not paused on is Cairn's to run with
  // the plan's own arguments, not the agent's.
  const pausedHere = step.status === "pending" && step.pauseReason?.stepId === link.stepId;
  if (step.status === "pending" && !pausedHere) {
    throw new AppError(
      "CONFLICT",
      `completesStep: step ${step.stepOrder} is Cairn's to run and the plan has not paused on it, so a call of yours cannot stand in for it; nothing was run. Call get_next_step: Cairn runs the step, or tells you what it needs.`,
      { field: "completesStep", stepStatus: step.status },
    );
  }
  if (step.status !== "pending" && step.status !== "failed") {
    throw new AppError(
      "CONFLICT",
      `completesStep: step ${step.stepOrder} is ${step.status}, so it takes no result now; nothing was run. Call get_next_step to see where the plan is.`,
      { field: "completesStep", stepStatus: step.status },
    );
  }
}

/** Records a linked call's result as its step's result (a failed step is retried first). */
export async function completeLinkedStep(
  ctx: ServiceContext,
  link: LinkedStep,
  tool: string,
  result: Record<string, unknown>,
): Promise<CompletedStep> {
  const [step] = await ctx.db
    .select({ status: planSteps.status })
    .from(planSteps)
    .where(and(eq(planSteps.id, link.stepId), sameTenant(planSteps.tenantId, ctx.tenantId)));
  if (step?.status === "failed") {
    await modifyPlan(ctx, {
      planId: link.planId,
      action: "retry_step",
      stepId: link.stepId,
      modificationRationale: `The agent ran ${tool} for this step itself.`,
    });
  }
  const submitted = await submitStepResult(ctx, {
    planId: link.planId,
    stepId: link.stepId,
    result,
    resultSummary: `The agent ran ${tool} for this server-run step.`,
    stepExecutionReport: {
      thinking: `Ran ${tool} itself after the step paused, linked with completesStep.`,
      webSearches: [],
      webFetches: [],
      otherToolCalls: [{ tool }],
      subagents: [],
    },
  });
  return {
    stepId: submitted.stepId,
    stepOrder: submitted.stepOrder,
    planStatus: submitted.planStatus,
  };
}

/**
 * A server-step tool's use case with the optional link: checks the link, runs
 * the tool, then records its result on the linked step.
 */
export function withStepLink<In extends object, Out extends object>(
  tool: string,
  run: (ctx: ServiceContext, input: In) => Promise<Out>,
) {
  return async (
    ctx: ServiceContext,
    input: In & { completesStep?: LinkedStep | undefined },
  ): Promise<Out & { completedStep?: CompletedStep }> => {
    const { completesStep: link, ...rest } = input;
    // Checked before it is looked up: a malformed id would fail the query.
    const { completesStep } = parseInput(linkInput, { completesStep: link });
    if (completesStep) await checkLinkedStep(ctx, completesStep, tool);
    const result = await run(ctx, rest as In);
    if (!completesStep) return result;
    const completedStep = await completeLinkedStep(
      ctx,
      completesStep,
      tool,
      result as Record<string, unknown>,
    );
    return { ...result, completedStep };
  };
}

export const completedStepOutput = z
  .object({ stepId: z.string(), stepOrder: z.number(), planStatus: z.string() })
  .optional();

/**
 * A server-step tool's output schema: the use case's own plus the optional
 * `completedStep` that `withStepLink` adds (listed first, as tools/list shows it).
 */
export function withCompletedStepOutput<Shape extends z.ZodRawShape>(output: z.ZodObject<Shape>) {
  return z.object({ completedStep: completedStepOutput, ...output.shape });
}
