/**
 * create_research_plan (docs/execution-loop.md): the plan,
 * its steps and branching conditions, the skill-execution auto-link and the
 * `plan_modified/created` audit row, in one transaction. Every condition is
 * parsed here so an agent learns of a typo at once, not when the step completes.
 */
import "server-only";
import { and, desc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import {
  planBranchingConditions,
  planSteps,
  researchPlans,
  skillExecutions,
  tenants,
} from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { BRANCH_ACTIONS } from "../../plan-engine/branch-actions";
import { conditionPathProblem, parseConditionExpression } from "../../plan-engine/conditions";
import { approvalsRequiredField, checkApprovalsAsked } from "../reviews/review-quorum";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import {
  jsonAtMost,
  MAX_ACTION_PARAMS_BYTES,
  MAX_STEPS,
  newStepField,
  sessionIdField,
} from "../shared/fields";
import { stepRef, stepType } from "../shared/output-fields";
import { refuseDefinitionTotal, stepDefinitionBytes } from "../shared/plan-definitions";
import { stepDefinitionColumns, validateStepDefinition } from "../shared/server-step-tools";
import { parseInput } from "../shared/validation";

export const branchingConditionInput = z.object({
  afterStepOrder: z.int().min(1).describe("The stepOrder after which it is checked."),
  conditionExpression: z
    .string()
    .max(500)
    .describe(
      '`<path> <op> <literal>`: path confidence, status or result.<field>; op === !== >= <= > <; e.g. "result.sourceCount >= 5".',
    ),
  ifTrueAction: z
    .enum(BRANCH_ACTIONS)
    .describe(
      "skip_to: skip pending steps up to a target; add_steps: ask you for steps (modify_plan); fail: fail the plan; continue: nothing.",
    ),
  actionParams: jsonAtMost(
    z
      .record(z.string(), z.unknown())
      .optional()
      .describe("skip_to: { targetStepOrder } or { stepId }; fail: { reason }; add_steps: hints."),
    MAX_ACTION_PARAMS_BYTES,
    "keep the parameters to the target step and a short reason or hint.",
  ),
});

export const createPlanInput = z.object({
  name: z
    .string()
    .trim()
    .min(1)
    .max(300)
    .describe('A short name, e.g. "[Deep] EU battery recycling".'),
  researchQuestion: z.string().trim().min(1).max(5_000),
  steps: z
    .array(newStepField)
    .min(1, "a plan needs at least one step")
    .max(MAX_STEPS, `a plan has at most ${MAX_STEPS} steps`)
    .describe("In execution order (stepOrder 1, 2, ...)."),
  branchingConditions: z.array(branchingConditionInput).max(MAX_STEPS).optional(),
  planDesignRationale: z.string().max(10_000).optional(),
  outputFormattingNotes: z.string().max(10_000).optional(),
  approvalsRequired: approvalsRequiredField.optional(),
  sessionId: sessionIdField
    .optional()
    .describe("Your session id; links the plan to your skill execution."),
});

export type CreatePlanInput = z.input<typeof createPlanInput>;

type ResolvedCondition = {
  afterStepOrder: number;
  conditionExpression: string;
  ifTrueAction: (typeof BRANCH_ACTIONS)[number];
  actionParams: Record<string, unknown>;
  targetStepOrder: number | null;
};

function resolveConditions(
  conditions: z.output<typeof branchingConditionInput>[],
  stepCount: number,
): ResolvedCondition[] {
  return conditions.map((condition, index) => {
    const label = `branchingConditions[${index}]`;
    if (condition.afterStepOrder > stepCount) {
      throw new AppError(
        "INVALID_STEP_REFERENCE",
        `${label}.afterStepOrder is ${condition.afterStepOrder} but the plan has ${stepCount} step(s); use a stepOrder from 1 to ${stepCount}.`,
        { index, afterStepOrder: condition.afterStepOrder },
      );
    }
    const parsed = parseConditionExpression(condition.conditionExpression);
    if (!parsed.ok) {
      throw new AppError(
        "INVALID_CONDITION",
        `${label}.conditionExpression "${condition.conditionExpression}" cannot be evaluated: ${parsed.reason}.`,
        { index, reason: parsed.reason },
      );
    }
    const pathProblem = conditionPathProblem(parsed.path);
    if (pathProblem) {
      throw new AppError(
        "INVALID_CONDITION",
        `${label}.conditionExpression "${condition.conditionExpression}" would never fire: ${pathProblem.reason}. Did you mean ${pathProblem.suggestion}?`,
        { index, path: parsed.path, suggestion: pathProblem.suggestion },
      );
    }
    const params = { ...(condition.actionParams ?? {}) };
    let targetStepOrder: number | null = null;
    if (condition.ifTrueAction === "skip_to") {
      const order = params.targetStepOrder;
      if (params.stepId !== undefined && order === undefined) {
        // At creation no step id exists yet that the caller could know.
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `${label}.actionParams.stepId cannot refer to a step of a plan that does not exist yet; give actionParams.targetStepOrder (the 1-based order of the target step) instead.`,
          { index },
        );
      }
      if (typeof order !== "number" || !Number.isInteger(order)) {
        throw new AppError(
          "VALIDATION_ERROR",
          `${label}: skip_to needs actionParams.targetStepOrder, the 1-based order of the step to skip to.`,
          { index },
        );
      }
      if (order > stepCount || order <= condition.afterStepOrder) {
        throw new AppError(
          "INVALID_STEP_REFERENCE",
          `${label}.actionParams.targetStepOrder is ${order}; it must come after step ${condition.afterStepOrder} and be at most ${stepCount}.`,
          { index, targetStepOrder: order },
        );
      }
      targetStepOrder = order;
    }
    return {
      afterStepOrder: condition.afterStepOrder,
      conditionExpression: condition.conditionExpression.trim(),
      ifTrueAction: condition.ifTrueAction,
      actionParams: params,
      targetStepOrder,
    };
  });
}

/** The answer: the stored plan, its steps and conditions (the MCP tool's output schema). */
export const createdPlanOutput = z.object({
  planId: z.string(),
  name: z.string(),
  status: z.literal("planning"),
  steps: z.array(stepRef),
  firstStep: z.object({
    stepId: z.string(),
    stepOrder: z.number(),
    stepType,
    instructions: z.string(),
  }),
  branchingConditions: z.array(
    z.object({
      conditionId: z.string(),
      afterStepOrder: z.number(),
      conditionExpression: z.string(),
      ifTrueAction: z.string(),
      actionParams: z.record(z.string(), z.unknown()),
    }),
  ),
  linkedExecutionId: z.string().nullable(),
  /** What to call next. */
  hint: z.string(),
});

export type CreatedPlan = z.infer<typeof createdPlanOutput>;

/** Who made a plan, as its row names them (create_research_plan, fork_plan). */
export function creatorColumns(ctx: ServiceContext) {
  return {
    createdByKeyId: ctx.actor.type === "api_key" ? ctx.actor.id : null,
    // A key names its person through api_key; a connected app acts as the
    // person who approved it, and has no row a plan could reference.
    createdByUserId:
      ctx.actor.type === "user"
        ? ctx.actor.id
        : ctx.actor.type === "oauth_app"
          ? (ctx.actor.credential?.userId ?? null)
          : null,
  };
}

export async function createPlan(ctx: ServiceContext, raw: CreatePlanInput): Promise<CreatedPlan> {
  const input = parseInput(createPlanInput, raw);
  const conditions = resolveConditions(input.branchingConditions ?? [], input.steps.length);
  input.steps.forEach((step, index) => {
    validateStepDefinition(index + 1, step);
  });
  const now = new Date();

  return ctx.db.transaction(async (tx) => {
    if (input.approvalsRequired !== undefined) {
      const [team] = await tx
        .select({ approvalsRequired: tenants.reviewApprovalsRequired })
        .from(tenants)
        .where(eq(tenants.id, ctx.tenantId));
      checkApprovalsAsked(team?.approvalsRequired ?? 1, input.approvalsRequired);
    }
    const [plan] = await tx
      .insert(researchPlans)
      .values({
        tenantId: ctx.tenantId,
        name: input.name,
        researchQuestion: input.researchQuestion,
        planDesignRationale: input.planDesignRationale,
        outputFormattingNotes: input.outputFormattingNotes,
        approvalsRequired: input.approvalsRequired ?? null,
        sessionId: input.sessionId,
        ...creatorColumns(ctx),
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: researchPlans.id });
    if (!plan) throw new AppError("INTERNAL_ERROR", "The plan was not created.");

    const steps = await tx
      .insert(planSteps)
      .values(
        input.steps.map((step, index) => ({
          tenantId: ctx.tenantId,
          planId: plan.id,
          stepOrder: index + 1,
          stepType: step.stepType,
          instructions: step.instructions,
          ...stepDefinitionColumns(step),
          createdAt: now,
          updatedAt: now,
        })),
      )
      .returning({
        id: planSteps.id,
        stepOrder: planSteps.stepOrder,
        stepType: planSteps.stepType,
        instructions: planSteps.instructions,
        definitionBytes: stepDefinitionBytes().mapWith(Number),
      });
    refuseDefinitionTotal(
      steps.reduce((total, step) => total + step.definitionBytes, 0),
      0,
    );
    steps.sort((a, b) => a.stepOrder - b.stepOrder);
    const idByOrder = new Map(steps.map((step) => [step.stepOrder, step.id]));

    const storedConditions =
      conditions.length === 0
        ? []
        : await tx
            .insert(planBranchingConditions)
            .values(
              conditions.map((condition, position) => ({
                tenantId: ctx.tenantId,
                planId: plan.id,
                position,
                afterStepId: idByOrder.get(condition.afterStepOrder) as string,
                conditionExpression: condition.conditionExpression,
                ifTrueAction: condition.ifTrueAction,
                actionParams:
                  condition.targetStepOrder === null
                    ? condition.actionParams
                    : {
                        ...condition.actionParams,
                        stepId: idByOrder.get(condition.targetStepOrder),
                      },
                createdAt: now,
              })),
            )
            .returning({
              id: planBranchingConditions.id,
              afterStepId: planBranchingConditions.afterStepId,
              conditionExpression: planBranchingConditions.conditionExpression,
              ifTrueAction: planBranchingConditions.ifTrueAction,
              actionParams: planBranchingConditions.actionParams,
            });

    // docs/execution-flow.md: the newest `started` execution of this session.
    let linkedExecutionId: string | null = null;
    if (input.sessionId) {
      const [execution] = await tx
        .select({ id: skillExecutions.id })
        .from(skillExecutions)
        .where(
          and(
            eq(skillExecutions.tenantId, ctx.tenantId),
            eq(skillExecutions.sessionId, input.sessionId),
            eq(skillExecutions.status, "started"),
          ),
        )
        .orderBy(desc(skillExecutions.createdAt))
        .limit(1)
        .for("update");
      if (execution) {
        await tx
          .update(skillExecutions)
          .set({
            planId: plan.id,
            status: "executing",
            updatedAt: now,
            metadata: sql`${skillExecutions.metadata} || ${JSON.stringify({
              planDesignRationale: input.planDesignRationale ?? null,
            })}::jsonb`,
          })
          .where(eq(skillExecutions.id, execution.id));
        linkedExecutionId = execution.id;
      }
    }

    await writeAuditLog(tx, ctx, {
      eventType: "plan_modified",
      planId: plan.id,
      payload: {
        action: "created",
        stepCount: steps.length,
        conditionCount: storedConditions.length,
        sessionId: input.sessionId ?? null,
        linkedExecutionId,
        ...(input.approvalsRequired !== undefined
          ? { approvalsRequired: input.approvalsRequired }
          : {}),
      },
    });

    const orderById = new Map(steps.map((step) => [step.id, step.stepOrder]));
    const first = steps[0];
    if (!first) throw new AppError("INTERNAL_ERROR", "The plan has no steps.");
    return {
      planId: plan.id,
      name: input.name,
      status: "planning",
      steps: steps.map((step) => ({
        stepId: step.id,
        stepOrder: step.stepOrder,
        stepType: step.stepType,
      })),
      firstStep: {
        stepId: first.id,
        stepOrder: first.stepOrder,
        stepType: first.stepType,
        instructions: first.instructions,
      },
      branchingConditions: storedConditions.map((condition) => ({
        conditionId: condition.id,
        afterStepOrder: orderById.get(condition.afterStepId) ?? 0,
        conditionExpression: condition.conditionExpression,
        ifTrueAction: condition.ifTrueAction,
        actionParams: condition.actionParams,
      })),
      linkedExecutionId,
      hint: `Plan ${plan.id} is stored. Call get_next_step with this planId to be handed step ${first.stepOrder} (${first.stepType}); in a later session, get_research_context with the planId picks the plan up where it stands.`,
    };
  });
}
