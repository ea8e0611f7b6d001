/**
 * store_research_output's check of a deliverable's citations against the
 * plan's sources and key claims (docs/evidence.md, "The deliverable's citations").
 */
import "server-only";
import { setImmediate as nextTurn } from "node:timers/promises";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { planSources, planSteps, stepClaims } from "../../db/schema";
import {
  type CitationCheck,
  type CitationScan,
  checkCitations,
  citationScanSteps,
} from "../../plan-engine/citations";
import type { ServiceContext } from "../shared/context";

/**
 * The deliverable's citations (links, DOIs, arXiv ids) and whether the plan
 * read each (not_read: it never did), numbered references that lead to no
 * link, and key claims none of whose sources it cites.
 */
export const citationCheckOutput = z.object({
  citations: z.array(
    z.object({
      written: z.string(),
      key: z.string(),
      href: z.string(),
      status: z.enum(["plan_source", "not_read"]),
    }),
  ),
  unresolvedReferences: z.array(z.string()),
  uncitedKeyClaims: z.array(
    z.object({
      stepId: z.string(),
      stepOrder: z.number(),
      text: z.string(),
      sourceKeys: z.array(z.string()),
    }),
  ),
  truncated: z.boolean(),
});

/** How long the scan keeps the event loop before letting other requests' work run. */
const SLICE_MS = 5;

/**
 * A deliverable's citations, found before its transaction, in slices of a few
 * milliseconds: 500,000 characters take a few hundred milliseconds to scan,
 * and another team's call must not wait behind them (docs/operations.md,
 * "Work on input").
 */
export async function scanCitationsInSlices(content: string): Promise<CitationScan> {
  const steps = citationScanSteps(content);
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
}

/** The scan (`scanCitationsInSlices`, made before the transaction) held against the plan's sources and key claims. */
export async function checkDeliverable(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  scan: CitationScan,
): Promise<CitationCheck> {
  const sources = await db
    .select({ key: planSources.canonicalKey })
    .from(planSources)
    .where(and(eq(planSources.tenantId, ctx.tenantId), eq(planSources.planId, planId)));
  const claims = await db
    .select({
      stepId: stepClaims.stepId,
      stepOrder: planSteps.stepOrder,
      text: stepClaims.text,
      supports: stepClaims.supports,
    })
    .from(stepClaims)
    .innerJoin(planSteps, eq(planSteps.id, stepClaims.stepId))
    .where(
      and(
        eq(stepClaims.tenantId, ctx.tenantId),
        eq(stepClaims.planId, planId),
        eq(stepClaims.keyClaim, true),
      ),
    )
    .orderBy(planSteps.stepOrder, stepClaims.position);
  return checkCitations(
    scan,
    new Set(sources.map((s) => s.key)),
    claims.map((claim) => ({
      stepId: claim.stepId,
      stepOrder: claim.stepOrder,
      text: claim.text,
      sourceKeys: claim.supports.map((c) => c.sourceKey),
    })),
  );
}

/** What the answer tells the agent: what to fix before presenting, or, when nothing, what comes next. */
export function citationHint(check: CitationCheck): string {
  const notRead = check.citations.filter((c) => c.status === "not_read");
  const parts = [
    notRead.length > 0 &&
      `${notRead.length} citation(s) name sources this plan never read (${notRead
        .slice(0, 5)
        .map((c) => c.written)
        .join(", ")}): read them in a step, or cite the sources the findings came from`,
    check.unresolvedReferences.length > 0 &&
      `numbered references without a linked entry: ${check.unresolvedReferences.slice(0, 10).join(", ")}`,
    check.uncitedKeyClaims.length > 0 &&
      `${check.uncitedKeyClaims.length} key claim(s) are stated without any of their sources cited (${check.uncitedKeyClaims
        .slice(0, 3)
        .map((c) => `"${c.text}"`)
        .join(", ")})`,
  ].filter((part): part is string => typeof part === "string");
  // A clean check still says what comes next, so the loop does not end at "stored".
  return parts.length === 0
    ? "Stored, and every citation checks out. Present the deliverable to the user, then record their reaction with submit_research_feedback."
    : `Citations to fix before presenting: ${parts.join("; ")}. Store the corrected deliverable again.`;
}
