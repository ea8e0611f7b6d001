/**
 * log_skill_execution (docs/execution-flow.md and
 * "Tracking Completion"): creates the tracking record of one research skill
 * invocation, with the interview's extraction and the routing decision, and
 * moves it through started -> executing -> completed | failed (see
 * lib/plan-engine/skill-executions.ts). Writes `skill_started` on create and
 * `skill_completed` when the record closes, in the same transaction.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { skillExecutions } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import {
  decideSkillExecutionUpdate,
  isTerminalSkillExecutionStatus,
  SKILL_EXECUTION_STATUSES,
} from "../../plan-engine/skill-executions";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField, sessionIdField } from "../shared/fields";
import { getPlan } from "../shared/plan-access";
import { lockSkillExecution } from "../shared/skill-execution-access";
import { parseInput } from "../shared/validation";

export const RESEARCH_TYPES = [
  "general_topic",
  "competitive_analysis",
  "decision_support",
] as const;
export const ORIGINAL_QUERY_MAX = 5_000;

const text = (max: number) => z.string().trim().max(max);

/**
 * The metadata fields of docs/execution-flow.md, described for the LLM that fills
 * them. Other keys are kept as given (the output skill adds stepsCompleted,
 * artifactsStored, checkpointFeedback), so the object is open.
 */
export const skillExecutionMetadata = z
  .looseObject({
    topic: text(1_000).min(1).optional(),
    researchType: z
      .enum(RESEARCH_TYPES)
      .optional()
      .describe(
        "general_topic: understand a subject; competitive_analysis: compare options; decision_support: inform a choice.",
      ),
    scope: text(2_000).optional(),
    depthSignals: z
      .array(text(200))
      .max(20)
      .optional()
      .describe('Depth words of the request, e.g. ["quick"]; [] if none.'),
    decisionContext: text(2_000).optional(),
    knownContext: text(5_000).optional(),
    outputMediaType: text(100)
      .optional()
      .describe(
        "markdown_report, executive_summary, comparison_table, slide_outline, email, chat_answer or another short name.",
      ),
    outputFormattingInstructions: text(5_000).optional(),
    clarifyingQuestions: z
      .array(z.object({ question: text(2_000).min(1), answer: text(5_000) }))
      .max(2, "never more than two clarifying questions")
      .optional(),
    skipQuestionsReason: text(2_000).optional(),
    routingRationale: text(5_000)
      .optional()
      .describe("Why scan or deep: options, dimensions, ambiguity, depth signals."),
    delegatedTo: z.enum(["scan", "deep"]).optional(),
    originalQuery: z
      .string()
      .optional()
      .describe(
        `The user's message verbatim (the first ${ORIGINAL_QUERY_MAX} characters are kept).`,
      ),
    priorResearchCheck: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        "{ artifactsFound, artifactIds, userDecision: none | use_existing | refresh | unique, exchange }.",
      ),
  })
  .describe("On create, every key that applies; on update, the keys to set.");

export const logSkillExecutionInput = z.object({
  executionId: z.uuid("must be an execution id (a UUID)").optional(),
  skillName: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .describe('"research" for a run the router started, also when a later part continues it.'),
  status: z
    .enum(SKILL_EXECUTION_STATUSES)
    .describe(
      "started: create; executing: under way (create_research_plan sets it); completed (closedReason if no plan); failed (errorMessage). The same status again adds metadata.",
    ),
  sessionId: sessionIdField.optional(),
  planId: planIdField
    .optional()
    .describe("Link to this plan, when create_research_plan's linkedExecutionId was null."),
  metadata: skillExecutionMetadata.default({}),
  errorMessage: text(5_000).min(1).optional(),
  closedReason: text(2_000).min(1).optional(),
});

/** The answer: the execution's id and status, the linked plan and what to do next (the MCP tool's output schema). */
export const loggedSkillExecutionOutput = z.object({
  executionId: z.string(),
  status: z.enum(SKILL_EXECUTION_STATUSES),
  planId: z.string().nullable(),
  hint: z.string(),
});

export type LoggedSkillExecution = z.infer<typeof loggedSkillExecutionOutput>;

type Metadata = z.output<typeof skillExecutionMetadata>;

/** What the router must record when it creates a record, so routing can be analysed later. */
function missingCreateFields(metadata: Metadata): string[] {
  const missing: string[] = [];
  const required = [
    "topic",
    "researchType",
    "scope",
    "depthSignals",
    "routingRationale",
    "delegatedTo",
    "originalQuery",
  ] as const;
  for (const key of required) {
    if (metadata[key] === undefined || metadata[key] === "") missing.push(`metadata.${key}`);
  }
  const asked = (metadata.clarifyingQuestions?.length ?? 0) > 0;
  if (!asked && !metadata.skipQuestionsReason) {
    missing.push("metadata.clarifyingQuestions or metadata.skipQuestionsReason");
  }
  return missing;
}

function normalised(metadata: Metadata): Metadata {
  if (metadata.originalQuery === undefined) return metadata;
  return { ...metadata, originalQuery: metadata.originalQuery.slice(0, ORIGINAL_QUERY_MAX) };
}

type Input = z.output<typeof logSkillExecutionInput>;

export async function logSkillExecution(
  ctx: ServiceContext,
  raw: z.input<typeof logSkillExecutionInput>,
): Promise<LoggedSkillExecution> {
  const input = parseInput(logSkillExecutionInput, raw);
  const metadata = normalised(input.metadata);
  return input.executionId
    ? updateExecution(ctx, input, input.executionId, metadata)
    : createExecution(ctx, input, metadata);
}

async function createExecution(
  ctx: ServiceContext,
  input: Input,
  metadata: Metadata,
): Promise<LoggedSkillExecution> {
  const now = new Date();
  if (input.status !== "started") {
    throw new AppError(
      "VALIDATION_ERROR",
      `status: a new tracking record starts as "started" (you sent "${input.status}"); to update a record, pass its executionId.`,
    );
  }
  const missing = missingCreateFields(metadata);
  if (missing.length > 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${missing.join(", ")}: required when creating a tracking record (docs/execution-flow.md).`,
      { missing },
    );
  }
  return ctx.db.transaction(async (tx) => {
    if (input.planId) await getPlan(tx, ctx, input.planId);
    const [row] = await tx
      .insert(skillExecutions)
      .values({
        tenantId: ctx.tenantId,
        planId: input.planId ?? null,
        skillName: input.skillName,
        status: "started",
        sessionId: input.sessionId ?? null,
        metadata,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: skillExecutions.id });
    if (!row) throw new AppError("INTERNAL_ERROR", "The skill execution was not created.");
    await writeAuditLog(tx, ctx, {
      eventType: "skill_started",
      planId: input.planId ?? null,
      payload: {
        executionId: row.id,
        skillName: input.skillName,
        status: "started",
        sessionId: input.sessionId ?? null,
        researchType: metadata.researchType ?? null,
        delegatedTo: metadata.delegatedTo ?? null,
      },
    });
    return {
      executionId: row.id,
      status: "started" as const,
      planId: input.planId ?? null,
      hint: input.sessionId
        ? "Keep this executionId. Pass the same sessionId to create_research_plan and the plan links to this record."
        : "Keep this executionId for the later updates. Without a sessionId, create_research_plan cannot link the plan to this record.",
    };
  });
}

async function updateExecution(
  ctx: ServiceContext,
  input: Input,
  executionId: string,
  metadata: Metadata,
): Promise<LoggedSkillExecution> {
  const now = new Date();
  return ctx.db.transaction(async (tx) => {
    const current = await lockSkillExecution(tx, ctx, executionId);
    const { statusChanges } = decideSkillExecutionUpdate({
      from: current.status,
      to: input.status,
      closedReason: input.closedReason,
      errorMessage: input.errorMessage,
    });
    if (input.planId) {
      await getPlan(tx, ctx, input.planId);
      if (current.planId !== null && current.planId !== input.planId) {
        throw new AppError(
          "VALIDATION_ERROR",
          `planId: this skill execution is already linked to plan ${current.planId}; a record follows one plan.`,
          { linkedPlanId: current.planId },
        );
      }
    }
    const planId = current.planId ?? input.planId ?? null;
    const closing = isTerminalSkillExecutionStatus(input.status);
    // The expected current status is part of the `where` as well as the row
    // lock: the write itself is guarded, as docs/architecture.md asks.
    const [updated] = await tx
      .update(skillExecutions)
      .set({
        status: input.status,
        sessionId: current.sessionId ?? input.sessionId ?? null,
        planId,
        metadata: sql`${skillExecutions.metadata} || ${JSON.stringify(metadata)}::jsonb`,
        updatedAt: now,
        // The closing fields belong to the move that closes the record.
        ...(input.status === "failed" ? { errorMessage: input.errorMessage ?? null } : {}),
        ...(closing ? { closedReason: input.closedReason ?? null, completedAt: now } : {}),
      })
      .where(and(eq(skillExecutions.id, current.id), eq(skillExecutions.status, current.status)))
      .returning({ id: skillExecutions.id, status: skillExecutions.status });
    if (!updated) throw new AppError("CONFLICT", "The skill execution changed meanwhile; retry.");
    if (statusChanges && closing) {
      await writeAuditLog(tx, ctx, {
        eventType: "skill_completed",
        planId,
        payload: {
          executionId: current.id,
          skillName: current.skillName,
          status: input.status,
          closedReason: input.closedReason ?? null,
          errorMessage: input.errorMessage ?? null,
        },
      });
    }
    return {
      executionId: current.id,
      status: input.status,
      planId,
      hint: closing
        ? "This record is closed; a new research request starts a new one."
        : "Recorded. Close the record with status completed (or failed with errorMessage) when the research ends.",
    };
  });
}
