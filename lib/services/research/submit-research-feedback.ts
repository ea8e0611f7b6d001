/**
 * submit_research_feedback (docs/execution-flow.md): the two
 * feedback moments after delivery. `initial` right after the deliverable is
 * presented; `closing` when the conversation moves on, with what the later
 * discussion showed. Both belong to the plan and its skill execution.
 */
import "server-only";
import { and, count, eq } from "drizzle-orm";
import { z } from "zod";
import { FEEDBACK_TYPES, researchFeedback } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { lockPlan } from "../shared/plan-access";
import { executionForPlan } from "../shared/skill-execution-access";
import { parseInput } from "../shared/validation";
import { executionIdField } from "./store-research-output";

/**
 * The most feedback one plan takes: an initial and a closing one for each of
 * five rounds. Its readers (the contexts, the plan page) show all of it, and
 * 300 of them at their longest made get_research_context 6 MB and the plan
 * page 24 MB (docs/execution-flow.md).
 */
export const MAX_PLAN_FEEDBACK = 10;

export const submitResearchFeedbackInput = z.object({
  planId: planIdField,
  executionId: executionIdField.optional(),
  feedbackType: z
    .enum(FEEDBACK_TYPES)
    .describe("initial: right after delivery; closing: what later conversation showed."),
  satisfaction: z
    .int("must be a whole number from 1 to 5")
    .min(1)
    .max(5)
    .describe("1 very unhappy to 5 very happy, inferred from their words."),
  summary: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(5_000)
    .describe("What the user said, in 1-3 sentences."),
  improvementSuggestions: z.string().trim().max(5_000).optional(),
  followUpRequested: z.boolean(),
});

/** The answer: the stored feedback's id and what it belongs to (the MCP tool's output schema). */
export const submittedFeedbackOutput = z.object({
  feedbackId: z.string(),
  planId: z.string(),
  executionId: z.string().nullable(),
  feedbackType: z.enum(FEEDBACK_TYPES),
  createdAt: z.string(),
});

export type SubmittedFeedback = z.infer<typeof submittedFeedbackOutput>;

export async function submitResearchFeedback(
  ctx: ServiceContext,
  raw: z.input<typeof submitResearchFeedbackInput>,
): Promise<SubmittedFeedback> {
  const input = parseInput(submitResearchFeedbackInput, raw);
  return ctx.db.transaction(async (tx) => {
    // Locked, so concurrent submissions count each other.
    const plan = await lockPlan(tx, ctx, input.planId);
    const [held] = await tx
      .select({ n: count() })
      .from(researchFeedback)
      .where(
        and(eq(researchFeedback.planId, plan.id), eq(researchFeedback.tenantId, ctx.tenantId)),
      );
    if ((held?.n ?? 0) >= MAX_PLAN_FEEDBACK) {
      throw new AppError(
        "VALIDATION_ERROR",
        `planId: the plan holds ${MAX_PLAN_FEEDBACK} feedback already, the most one plan takes; nothing was stored.`,
      );
    }
    const executionId = await executionForPlan(tx, ctx, plan.id, input.executionId);
    const [row] = await tx
      .insert(researchFeedback)
      .values({
        tenantId: ctx.tenantId,
        planId: plan.id,
        executionId,
        feedbackType: input.feedbackType,
        satisfaction: input.satisfaction,
        summary: input.summary,
        improvementSuggestions: input.improvementSuggestions ?? null,
        followUpRequested: input.followUpRequested,
      })
      .returning({ id: researchFeedback.id, createdAt: researchFeedback.createdAt });
    if (!row) throw new AppError("INTERNAL_ERROR", "The feedback was not stored.");
    return {
      feedbackId: row.id,
      planId: plan.id,
      executionId,
      feedbackType: input.feedbackType,
      createdAt: row.createdAt.toISOString(),
    };
  });
}
