/**
 * get_plan_history (docs/history-and-forks.md): a plan's revisions, newest
 * first, each with who made it, when, why and its diff of the steps. Paged
 * by the shared cursor, and within HISTORY_PAGE_BYTES: a diff's values were cut
 * when it was written, the rationale is cut here in the database.
 */
import "server-only";
import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { planRevisions } from "../../db/schema";
import { STEP_STATUSES, STEP_TYPES } from "../../plan-engine/states";
import { cutColumn, fitting } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { cursorField, keyset, nextCursorField } from "../shared/pagination";
import { getPlan } from "../shared/plan-access";
import { parseInput } from "../shared/validation";

export const getPlanHistoryInput = z.object({ planId: planIdField, cursor: cursorField });

const value = z.object({ text: z.string(), cut: z.boolean() }).nullable();
const change = z.object({ stepId: z.string(), stepOrder: z.number(), from: value, to: value });

export const revisionDiffOutput = z.object({
  added: z.array(
    z.object({
      stepId: z.string(),
      stepOrder: z.number(),
      stepType: z.enum(STEP_TYPES),
      instructions: value,
    }),
  ),
  removed: z.array(z.object({ stepId: z.string(), stepOrder: z.number(), instructions: value })),
  moved: z.array(z.object({ stepId: z.string(), from: z.number(), to: z.number() })),
  instructions: z.array(change),
  arguments: z.array(change),
  status: z.array(
    z.object({ stepId: z.string(), stepOrder: z.number(), to: z.enum(STEP_STATUSES) }),
  ),
  omitted: z.number(),
});

export const planRevisionOutput = z.object({
  revision: z.number(),
  at: z.string(),
  by: z.object({ type: z.string(), label: z.string() }),
  cause: z.string(),
  rationale: z.string().nullable(),
  rationaleCut: z.boolean(),
  diff: revisionDiffOutput,
});

export const planHistoryOutput = z.object({
  planId: z.string(),
  revisions: z.array(planRevisionOutput),
  nextCursor: nextCursorField,
});

export type PlanRevisionView = z.infer<typeof planRevisionOutput>;
export type PlanHistory = z.infer<typeof planHistoryOutput>;

/**
 * Revisions a page holds at most, the JSON text they fit in, and the most of
 * one revision's diff shown. The plan page carries a page twice (its HTML and
 * React's payload), and a `<` in a diff is 10 bytes there: a revert's diff of
 * 160 values of 400 `<` made a 1.5 MB plan page (docs/security.md).
 */
export const HISTORY_PAGE_SIZE = 10;
export const HISTORY_PAGE_BYTES = 32 * 1024;
export const REVISION_DIFF_BYTES = 16 * 1024;

const DIFF_LISTS = ["added", "removed", "moved", "instructions", "arguments", "status"] as const;

/** A stored diff within `budget` bytes of JSON text: each list's first entries that fit, the rest counted in `omitted`. */
function fitDiff(diff: PlanRevisionView["diff"], budget: number): PlanRevisionView["diff"] {
  const shown = { ...diff };
  let room = budget;
  for (const list of DIFF_LISTS) {
    const entries = diff[list] as readonly unknown[];
    let kept = 0;
    for (const entry of entries) {
      const bytes = Buffer.byteLength(JSON.stringify(entry), "utf8");
      if (bytes > room) break;
      room -= bytes;
      kept++;
    }
    shown.omitted += entries.length - kept;
    Object.assign(shown, { [list]: entries.slice(0, kept) });
  }
  return shown;
}

export async function getPlanHistory(
  ctx: ServiceContext,
  raw: z.input<typeof getPlanHistoryInput>,
): Promise<PlanHistory> {
  const input = parseInput(getPlanHistoryInput, raw);
  const plan = await getPlan(ctx.db, ctx, input.planId);
  const page = keyset(
    { list: "plan history", at: planRevisions.revision, sequence: true, id: planRevisions.id },
    input.cursor,
  );
  const rationale = cutColumn(planRevisions.rationale);
  const rows = await ctx.db
    .select({
      revision: planRevisions.revision,
      createdAt: planRevisions.createdAt,
      actorType: planRevisions.actorType,
      actorLabel: planRevisions.actorLabel,
      cause: planRevisions.cause,
      rationale: rationale.value,
      rationaleCut: rationale.cut,
      diff: planRevisions.diff,
      ...page.position,
    })
    .from(planRevisions)
    .where(
      and(eq(planRevisions.planId, plan.id), eq(planRevisions.tenantId, ctx.tenantId), page.where),
    )
    .orderBy(...page.orderBy)
    .limit(HISTORY_PAGE_SIZE + 1);
  const revisions = rows.map((row) => ({
    revision: row.revision,
    at: row.createdAt.toISOString(),
    by: { type: row.actorType, label: row.actorLabel },
    cause: row.cause,
    rationale: typeof row.rationale === "string" ? row.rationale : null,
    rationaleCut: row.rationaleCut,
    diff: fitDiff(row.diff, REVISION_DIFF_BYTES),
  }));
  // However long the diffs, the page stays within its bytes: fewer revisions, then the cursor.
  const fit = Math.min(fitting(revisions, HISTORY_PAGE_BYTES), HISTORY_PAGE_SIZE);
  const { nextCursor } = page.pageOf(rows, fit);
  return { planId: plan.id, revisions: revisions.slice(0, fit), nextCursor };
}
