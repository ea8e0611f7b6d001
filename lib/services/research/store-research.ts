/**
 * store_research (docs/execution-flow.md): keeps a
 * significant finding in the tenant's artifact library, where search_sources
 * finds it for later research and get_step_context / get_research_context show
 * it with its plan. A plan or step given must be the tenant's own.
 */
import "server-only";
import { z } from "zod";
import { researchArtifacts } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { recordEvidence } from "../evidence/record-evidence";
import type { ServiceContext } from "../shared/context";
import { planIdField, stepIdField } from "../shared/fields";
import { lockPlanForWork } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

/** PostgreSQL refuses a tsvector over 1 MB; text this long is far below that. */
export const CONTENT_TEXT_MAX = 200_000;

export const artifactTypeField = z
  .string()
  .trim()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a short snake_case name such as source_summary")
  .describe("snake_case: finding, source_summary, data_extract, analysis, synthesis, ...");

export const storeResearchInput = z.object({
  artifactType: artifactTypeField,
  title: z.string().trim().min(1).max(500),
  content: z.record(z.string(), z.unknown()),
  contentText: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(CONTENT_TEXT_MAX)
    .describe("The same as prose: what search_sources searches."),
  confidence: z.number().min(0).max(1),
  sourceUrls: z
    .array(z.url({ protocol: /^https?$/ }).max(2_000))
    .max(100)
    .optional(),
  planId: planIdField.optional(),
  stepId: stepIdField.optional().describe("The step that produced it (with planId)."),
});

/** The answer: the stored artifact's id and what it belongs to (the MCP tool's output schema). */
export const storedArtifactOutput = z.object({
  artifactId: z.string(),
  planId: z.string().nullable(),
  stepId: z.string().nullable(),
  createdAt: z.string(),
});

export type StoredArtifact = z.infer<typeof storedArtifactOutput>;

export async function storeResearch(
  ctx: ServiceContext,
  raw: z.input<typeof storeResearchInput>,
): Promise<StoredArtifact> {
  const input = parseInput(storeResearchInput, raw);
  if (input.stepId && !input.planId) {
    throw new AppError(
      "VALIDATION_ERROR",
      "planId: required with stepId; pass the plan the step belongs to.",
    );
  }
  return ctx.db.transaction(async (tx) => {
    const { plan, step } = input.planId
      ? await lockPlanForWork(tx, ctx, input.planId, "artifact", input.stepId)
      : { plan: undefined, step: undefined };
    const [row] = await tx
      .insert(researchArtifacts)
      .values({
        tenantId: ctx.tenantId,
        planId: input.planId ?? null,
        stepId: input.stepId ?? null,
        artifactType: input.artifactType,
        title: input.title,
        content: input.content,
        contentText: input.contentText,
        confidence: input.confidence,
        sourceUrls: input.sourceUrls ?? [],
      })
      .returning({
        id: researchArtifacts.id,
        planId: researchArtifacts.planId,
        stepId: researchArtifacts.stepId,
        createdAt: researchArtifacts.createdAt,
      });
    if (!row) throw new AppError("INTERNAL_ERROR", "The artifact was not stored.");
    // The pages an artifact came from are pages its plan read (docs/evidence.md).
    if (plan && input.sourceUrls?.length) {
      await recordEvidence(tx, ctx, {
        planId: plan.id,
        stepId: step?.id ?? null,
        stepOrder: step?.stepOrder ?? null,
        origin: "artifact",
        fetched: input.sourceUrls.map((url) => ({ url })),
        artifactId: row.id,
        now: row.createdAt.toISOString(),
      });
    }
    return {
      artifactId: row.id,
      planId: row.planId,
      stepId: row.stepId,
      createdAt: row.createdAt.toISOString(),
    };
  });
}
