/**
 * read_evidence: a plan's evidence a page at a time, or one source or claim
 * whole (docs/evidence.md, "Who reads it"). The contexts carry the first page
 * of each list with extracts and quotes shortened; this reads on by cursor and
 * gives the full text of the one an agent needs. It reads whole, a page of
 * text at a time, any other value a context shortened too: a step's result or
 * report, an artifact's content, the deliverable (read-plan-text.ts).
 */
import "server-only";
import { z } from "zod";
import { AppError } from "../../plan-engine/app-error";
import { planTextInput, planTextOutput, readPlanText } from "../research/read-plan-text";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { getPlan } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import {
  evidenceCursorFields,
  loadEvidenceClaim,
  loadEvidenceSource,
  loadPlanEvidence,
  planEvidenceOutput,
  wholeClaimOutput,
  wholeSourceOutput,
} from "./read-evidence";

export const readEvidenceInput = z.object({
  planId: planIdField,
  ...evidenceCursorFields,
  sourceKey: z
    .string()
    .min(1)
    .max(2_100)
    .optional()
    .describe("That source whole, instead of a page."),
  claimId: z
    .uuid("must be a claim id (a UUID)")
    .optional()
    .describe("That claim whole, instead of a page."),
  ...planTextInput,
});

export const readEvidenceOutput = z.object({
  planId: z.string(),
  /** The page asked for; null when one source or claim was. */
  evidence: planEvidenceOutput.nullable(),
  source: wholeSourceOutput.nullable(),
  claim: wholeClaimOutput.nullable(),
  text: planTextOutput.nullable(),
});

export type ReadEvidence = z.infer<typeof readEvidenceOutput>;

export async function readPlanEvidence(
  ctx: ServiceContext,
  raw: z.input<typeof readEvidenceInput>,
): Promise<ReadEvidence> {
  const input = parseInput(readEvidenceInput, raw);
  const asked = [input.sourceKey, input.claimId, input.of].filter((one) => one !== undefined);
  if (asked.length > 1) {
    throw new AppError("VALIDATION_ERROR", "sourceKey, claimId, of: give one of them at most.");
  }
  if ((input.of === undefined) !== (input.part === undefined)) {
    throw new AppError("VALIDATION_ERROR", "of, part: give both, to read one value whole.");
  }
  const plan = await getPlan(ctx.db, ctx, input.planId);
  if (input.of !== undefined && input.part !== undefined) {
    const text = await readPlanText(ctx.db, ctx, plan.id, {
      of: input.of,
      part: input.part,
      offset: input.offset ?? 0,
    });
    return { planId: plan.id, evidence: null, source: null, claim: null, text };
  }
  if (input.sourceKey !== undefined) {
    const source = await loadEvidenceSource(ctx.db, ctx, plan.id, input.sourceKey);
    if (!source) {
      throw new AppError(
        "NOT_FOUND",
        `sourceKey: the plan read no source ${JSON.stringify(input.sourceKey.slice(0, 200))}; take a sourceKey from the evidence's sources.`,
      );
    }
    return { planId: plan.id, evidence: null, source, claim: null, text: null };
  }
  if (input.claimId !== undefined) {
    const claim = await loadEvidenceClaim(ctx.db, ctx, plan.id, input.claimId);
    if (!claim) {
      throw new AppError("NOT_FOUND", `claimId: the plan holds no claim ${input.claimId}.`);
    }
    return { planId: plan.id, evidence: null, source: null, claim, text: null };
  }
  const evidence = await loadPlanEvidence(ctx.db, ctx, plan.id, {
    sourcesCursor: input.sourcesCursor,
    claimsCursor: input.claimsCursor,
  });
  return { planId: plan.id, evidence, source: null, claim: null, text: null };
}
