/**
 * store_research_output (docs/execution-flow.md, step 3): keeps the
 * final deliverable with its plan and skill execution, so the user can find it
 * later in the web UI and get_research_context returns it. A plan may hold
 * several (a redone or reformatted delivery); the newest is the deliverable.
 */
import "server-only";
import { createHash } from "node:crypto";
import { z } from "zod";
import { researchOutputs } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import {
  checkDeliverable,
  citationCheckOutput,
  citationHint,
  scanCitationsInSlices,
} from "../evidence/check-deliverable";
import { writeAuditLog } from "../shared/audit";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { lockPlanForWork } from "../shared/plan-access";
import { executionForPlan } from "../shared/skill-execution-access";
import { parseInput } from "../shared/validation";

export const OUTPUT_CONTENT_MAX = 500_000;

export const executionIdField = z
  .uuid("must be an execution id (a UUID)")
  .describe("Left out, the plan's linked skill execution.");

export const storeResearchOutputInput = z.object({
  planId: planIdField,
  executionId: executionIdField.optional(),
  outputMediaType: z
    .string()
    .trim()
    .min(1)
    .max(100)
    .describe(
      "markdown_report, executive_summary, comparison_table, slide_outline, email, chat_answer or another short name.",
    ),
  content: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(OUTPUT_CONTENT_MAX)
    .describe("The deliverable exactly as presented (Markdown for text)."),
  formattingNotes: z
    .string()
    .trim()
    .max(10_000)
    .optional()
    .describe("How you formatted it and why."),
});

/** The answer: the stored deliverable's id and what it belongs to (the MCP tool's output schema). */
export const storedOutputOutput = z.object({
  outputId: z.string(),
  planId: z.string(),
  executionId: z.string().nullable(),
  createdAt: z.string(),
  citationCheck: citationCheckOutput,
  /** What to fix in the deliverable's citations, or, when nothing, what comes next. */
  hint: z.string(),
});

export type StoredOutput = z.infer<typeof storedOutputOutput>;

export async function storeResearchOutput(
  ctx: ServiceContext,
  raw: z.input<typeof storeResearchOutputInput>,
): Promise<StoredOutput> {
  const input = parseInput(storeResearchOutputInput, raw);
  // The text's work is done before the transaction: a large deliverable never
  // holds a connection idle in transaction (docs/operations.md, "Work on input").
  const scan = await scanCitationsInSlices(input.content);
  return ctx.db.transaction(async (tx) => {
    const { plan } = await lockPlanForWork(tx, ctx, input.planId, "deliverable");
    const executionId = await executionForPlan(tx, ctx, plan.id, input.executionId);
    const citationCheck = await checkDeliverable(tx, ctx, plan.id, scan);
    const [row] = await tx
      .insert(researchOutputs)
      .values({
        tenantId: ctx.tenantId,
        planId: plan.id,
        executionId,
        outputMediaType: input.outputMediaType,
        content: input.content,
        formattingNotes: input.formattingNotes ?? null,
        citationCheck,
      })
      .returning({ id: researchOutputs.id, createdAt: researchOutputs.createdAt });
    if (!row) throw new AppError("INTERNAL_ERROR", "The deliverable was not stored.");
    await writeAuditLog(tx, ctx, {
      eventType: "output_stored",
      planId: plan.id,
      payload: {
        outputId: row.id,
        outputMediaType: input.outputMediaType,
        contentSha256: createHash("sha256").update(input.content).digest("hex"),
        contentLength: input.content.length,
        citations: citationCheck.citations.length,
        notRead: citationCheck.citations.filter((c) => c.status === "not_read").length,
      },
    });
    return {
      outputId: row.id,
      planId: plan.id,
      executionId,
      createdAt: row.createdAt.toISOString(),
      citationCheck,
      hint: citationHint(citationCheck),
    };
  });
}
