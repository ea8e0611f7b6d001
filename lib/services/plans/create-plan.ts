/**
 * create_research_plan (docs/execution-loop.md): the plan, its steps and
 * branching conditions, the skill-execution auto-link, the
 * `plan_modified/created` audit row and the plan's first revision, in one
 * statement (`insertPlan`). Every condition is
 * parsed here so an agent learns of a typo at once, not when the step completes.
 */
import "server-only";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { tenants } from "../../db/schema";
import { jsonParam, run, statement } from "../../db/statement";
import { AppError } from "../../plan-engine/app-error";
import { BRANCH_ACTIONS } from "../../plan-engine/branch-actions";
import { conditionPathProblem, parseConditionExpression } from "../../plan-engine/conditions";
import { STEP_TYPES } from "../../plan-engine/states";
import { approvalsRequiredField, checkApprovalsAsked } from "../reviews/review-quorum";
import { auditRows, auditRowsInsert } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import {
  jsonAtMost,
  MAX_ACTION_PARAMS_BYTES,
  MAX_STEPS,
  newStepField,
  sessionIdField,
} from "../shared/fields";
import { stepRef, stepType } from "../shared/output-fields";
import {
  MAX_PLAN_DEFINITION_BYTES,
  refuseDefinitionTotal,
  STEP_DEFINITION_BYTES,
} from "../shared/plan-definitions";
import { firstRevision } from "../shared/revisions";
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

/**
 * The plan, its steps, its branching conditions, the link to the session's
 * newest `started` skill execution (docs/execution-flow.md), the
 * `plan_modified/created` audit row and the plan's first revision with its
 * step definitions, in one statement, where eleven round trips took them: the
 * steps from a JSON array, each condition joined to its steps by order (a
 * skip_to's target stored as its `stepId`; one whose step is missing, which
 * the checks before it rule out, fails the statement on its null step), the
 * audit row naming the execution linked, each distinct step definition once
 * (a new plan has none stored, so a plain insert: with `on conflict`, each
 * row was a speculative insertion and a WAL record more). The plan's
 * definition limit is checked on the input before anything is written: over
 * it, the statement writes nothing and answers the total with no plan. One
 * statement is one transaction, so nothing of a plan is ever kept in part.
 */
const insertPlan = statement(
  "create a plan with its steps, conditions, link, audit row and first revision",
  `with input as (
    select s.*, ${STEP_DEFINITION_BYTES} as definition_bytes
    from jsonb_to_recordset($11::jsonb) as s(id uuid, step_order int, step_type step_type,
      instructions text, tool text, arguments jsonb, inputs jsonb, output_schema jsonb)
  ), total as (
    select coalesce(sum(definition_bytes), 0)::float8 as bytes from input
  ), plan as (
    insert into research_plan (id, tenant_id, name, research_question, plan_design_rationale,
      output_formatting_notes, approvals_required, session_id, created_by_key_id,
      created_by_user_id, created_at, updated_at)
    select $13::uuid, $1::uuid, $2::text, $3::text, $4::text, $5::text, $6::int, $7::text,
      $8::uuid, $9::uuid, $10::timestamptz, $10::timestamptz
    from total where total.bytes <= ${MAX_PLAN_DEFINITION_BYTES}
    returning id
  ), steps as (
    insert into plan_step (id, tenant_id, plan_id, step_order, step_type, instructions, tool,
      arguments, inputs, output_schema, created_at, updated_at)
    select s.id, $1::uuid, plan.id, s.step_order, s.step_type, s.instructions, s.tool,
      s.arguments, s.inputs, s.output_schema, $10::timestamptz, $10::timestamptz
    from plan cross join input s
    returning id, plan_id, step_order, step_type, instructions, tool, arguments, inputs,
      output_schema, definition_digest
  ), conditions as (
    insert into plan_branching_condition (tenant_id, plan_id, after_step_id, position,
      condition_expression, if_true_action, action_params, created_at)
    select $1::uuid, plan.id, after_step.id, c.position, c.expression, c.action,
      case when target.id is null then c.params
        else c.params || jsonb_build_object('stepId', target.id) end,
      $10::timestamptz
    from plan cross join jsonb_to_recordset($12::jsonb) as c(position int,
        "afterStepOrder" int, expression text, action text, params jsonb, "targetStepOrder" int)
      left join steps after_step on after_step.step_order = c."afterStepOrder"
      left join steps target on target.step_order = c."targetStepOrder"
    returning id, position, after_step_id, condition_expression, if_true_action, action_params
  ), execution as (
    select id from skill_execution
    where tenant_id = $1::uuid and session_id = $7::text and status = 'started'
      and exists (select from plan)
    order by created_at desc limit 1
    for update
  ), linked as (
    update skill_execution e set plan_id = plan.id, status = 'executing',
      updated_at = $10::timestamptz, metadata = e.metadata || $14::jsonb
    from plan, execution where e.id = execution.id
    returning e.id
  ), audit as (
    ${auditRowsInsert("$15::jsonb", "r.payload || jsonb_build_object('linkedExecutionId', (select id from linked))")}
    where exists (select from plan)
  ), definitions as (
    insert into plan_step_definition (tenant_id, plan_id, digest, definition)
    select distinct on (definition_digest) $1::uuid, plan_id, definition_digest,
      cairn_step_definition(step_type::text, instructions, tool, arguments, inputs, output_schema)
    from steps
  ), revision as (
    insert into plan_revision (tenant_id, plan_id, revision, cause, rationale, actor_type,
      actor_id, actor_label, steps, diff)
    select $1::uuid, plan.id, 1, $16::text, $17::text, $18::actor_type, $19::uuid, $20::text,
      (select jsonb_agg(jsonb_build_object('id', id, 'stepOrder', step_order,
        'digest', definition_digest) order by step_order) from steps),
      $21::jsonb
    from plan
  )
  select total.bytes as "definitionBytes", plan.id as "planId",
    (select id from linked) as "linkedExecutionId",
    coalesce((select json_agg(json_build_object('id', id, 'stepOrder', step_order,
      'stepType', step_type) order by step_order) from steps), '[]'::json) as steps,
    coalesce((select json_agg(json_build_object('id', c.id, 'afterStepOrder', s.step_order,
      'conditionExpression', c.condition_expression, 'ifTrueAction', c.if_true_action,
      'actionParams', c.action_params) order by c.position)
      from conditions c join steps s on s.id = c.after_step_id), '[]'::json) as conditions
  from total left join plan on true`,
  z.object({
    definitionBytes: z.number(),
    planId: z.string().nullable(),
    linkedExecutionId: z.string().nullable(),
    steps: z.array(
      z.object({ id: z.string(), stepOrder: z.number(), stepType: z.enum(STEP_TYPES) }),
    ),
    conditions: z.array(
      z.object({
        id: z.string(),
        afterStepOrder: z.number(),
        conditionExpression: z.string(),
        ifTrueAction: z.string(),
        actionParams: z.record(z.string(), z.unknown()),
      }),
    ),
  }),
);

export async function createPlan(ctx: ServiceContext, raw: CreatePlanInput): Promise<CreatedPlan> {
  const input = parseInput(createPlanInput, raw);
  const conditions = resolveConditions(input.branchingConditions ?? [], input.steps.length);
  input.steps.forEach((step, index) => {
    validateStepDefinition(index + 1, step);
  });
  const now = new Date();
  const creator = creatorColumns(ctx);

  if (input.approvalsRequired !== undefined) {
    const [team] = await ctx.db
      .select({ approvalsRequired: tenants.reviewApprovalsRequired })
      .from(tenants)
      .where(eq(tenants.id, ctx.tenantId));
    checkApprovalsAsked(team?.approvalsRequired ?? 1, input.approvalsRequired);
  }
  const planId = randomUUID();
  const stepIds = input.steps.map(() => randomUUID());
  // The audit row as written, but for the execution the statement links.
  const created = {
    eventType: "plan_modified" as const,
    planId,
    payload: {
      action: "created" as const,
      stepCount: input.steps.length,
      conditionCount: conditions.length,
      sessionId: input.sessionId ?? null,
      ...(input.approvalsRequired !== undefined
        ? { approvalsRequired: input.approvalsRequired }
        : {}),
    },
  };
  const revision = firstRevision(
    [created],
    input.steps.map((step, index) => ({
      id: stepIds[index] as string,
      stepOrder: index + 1,
      stepType: step.stepType,
      instructions: step.instructions,
    })),
  );
  if (!revision) throw new AppError("INTERNAL_ERROR", "A new plan made no revision.");
  const [plan] = await run(ctx.db, insertPlan, [
    ctx.tenantId,
    input.name,
    input.researchQuestion,
    input.planDesignRationale ?? null,
    input.outputFormattingNotes ?? null,
    input.approvalsRequired ?? null,
    input.sessionId ?? null,
    creator.createdByKeyId,
    creator.createdByUserId,
    now.toISOString(),
    jsonParam(
      input.steps.map((step, index) => {
        const definition = stepDefinitionColumns(step);
        // An absent key is SQL null in jsonb_to_recordset, whatever its type.
        return {
          id: stepIds[index],
          step_order: index + 1,
          step_type: step.stepType,
          instructions: step.instructions,
          tool: definition.tool ?? undefined,
          arguments: definition.arguments ?? undefined,
          inputs: definition.inputs ?? undefined,
          output_schema: definition.outputSchema ?? undefined,
        };
      }),
    ),
    jsonParam(
      conditions.map((condition, position) => ({
        position,
        afterStepOrder: condition.afterStepOrder,
        expression: condition.conditionExpression,
        action: condition.ifTrueAction,
        params: condition.actionParams,
        targetStepOrder: condition.targetStepOrder ?? undefined,
      })),
    ),
    planId,
    jsonParam({ planDesignRationale: input.planDesignRationale ?? null }),
    jsonParam(auditRows(ctx, [created])),
    revision.cause,
    revision.rationale,
    ctx.actor.type,
    ctx.actor.id,
    ctx.actor.label,
    jsonParam(revision.diff),
  ]);
  if (!plan) throw new AppError("INTERNAL_ERROR", "The plan was not created.");
  if (plan.planId === null) {
    // Over the limit, the statement wrote nothing.
    refuseDefinitionTotal(plan.definitionBytes, 0);
    throw new AppError("INTERNAL_ERROR", "The plan was not created.");
  }
  const { steps, conditions: storedConditions, linkedExecutionId } = plan;
  const first = steps[0];
  const firstInstructions = input.steps[0]?.instructions;
  if (!first || firstInstructions === undefined) {
    throw new AppError("INTERNAL_ERROR", "The plan has no steps.");
  }
  return {
    planId: plan.planId,
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
      instructions: firstInstructions,
    },
    branchingConditions: storedConditions.map(({ id, ...condition }) => ({
      conditionId: id,
      ...condition,
    })),
    linkedExecutionId,
    hint: `Plan ${plan.planId} is stored. Call get_next_step with this planId to be handed step ${first.stepOrder} (${first.stepType}); in a later session, get_research_context with the planId picks the plan up where it stands.`,
  };
}
