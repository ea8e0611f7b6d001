/**
 * One long value of a plan in full, for the pages' "Show all" links: the pages
 * show long payloads shortened (`shorten`, `shortenJson`), so a refresh every
 * few seconds never sends them whole (docs/reviews.md, "Size limits"). Tenant-scoped:
 * another team's id, or one of another plan, reads as not found.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import type { ServiceContext } from "../shared/context";

/** How much of a long value a page shows before its "Show all" link. */
export const PREVIEW_CHARS = 2_000;

/** A value as a page shows it: its first PREVIEW_CHARS characters, and the size of the whole. */
export const shortenedRow = z.object({
  text: z.string(),
  shortened: z.boolean(),
  bytes: z.number(),
});
export type Shortened = z.infer<typeof shortenedRow>;

/** The first `chars` characters of `text` (never half a surrogate pair). */
export function shorten(text: string, chars = PREVIEW_CHARS): Shortened {
  const bytes = Buffer.byteLength(text, "utf8");
  if (text.length <= chars) return { text, shortened: false, bytes };
  const end = /[\ud800-\udbff]/.test(text.charAt(chars - 1)) ? chars - 1 : chars;
  return { text: text.slice(0, end), shortened: true, bytes };
}

/** A JSON value as indented text, shortened. */
export const shortenJson = (value: unknown) => shorten(JSON.stringify(value, null, 2) ?? "null");

/** One field of a proposed result: its key, and its value as indented JSON, shortened. */
export const proposalFieldRow = z.object({ key: z.string(), value: shortenedRow });
export type ProposalField = z.infer<typeof proposalFieldRow>;

/**
 * The most JSON text of a proposal's fields a review shows. A proposal within
 * its size limit can hold thousands of tiny fields, each shown with its own
 * markup: shown whole, one review put 3 MB into the plan page and an inbox
 * page of twenty 61 MB. At least one field shows; the rest are counted, and
 * the whole proposal is behind its own link.
 */
export const PROPOSAL_PREVIEW_BYTES = 4 * 1024;
const MAX_SHOWN_KEY_CHARS = 200;

/**
 * A proposed result field by field, in the order the agent sent them (the
 * json column keeps it; JSON.parse puts integer-like keys first, as every
 * JavaScript object does), each shortened on its own, so one long field never
 * hides the keys after it, as many as fit in PROPOSAL_PREVIEW_BYTES (up to
 * the first key too long to show); and how many fields were left out.
 */
export function proposalPreview(proposal: Record<string, unknown>): {
  proposal: ProposalField[];
  proposalNotShown: number;
} {
  const keys = Object.keys(proposal);
  const fields: ProposalField[] = [];
  // Stops at the budget: the work is bounded by it, not by how many fields the proposal holds.
  let bytes = 0;
  for (const key of keys) {
    // A key is shown whole and named in its field's link: a long one only in the whole proposal.
    if (key.length > MAX_SHOWN_KEY_CHARS) break;
    const field = { key, value: shortenJson(proposal[key]) };
    bytes += Buffer.byteLength(JSON.stringify(field), "utf8");
    if (bytes > PROPOSAL_PREVIEW_BYTES && fields.length > 0) break;
    fields.push(field);
  }
  return { proposal: fields, proposalNotShown: keys.length - fields.length };
}

/** Which value: a part of a review (one field of its proposal), of a step, or an audit row's payload. */
export const fullValueQuery = z.union([
  z.object({ review: z.uuid(), part: z.enum(["summary", "instructions"]) }),
  // Without `field`, the whole proposal (its fields beyond PROPOSAL_PREVIEW_BYTES).
  z.object({ review: z.uuid(), part: z.literal("proposal"), field: z.string().optional() }),
  z.object({
    step: z.uuid(),
    part: z.enum([
      "instructions",
      "result",
      "report",
      "resultSummary",
      "failureReason",
      "arguments",
      "inputs",
      "outputSchema",
    ]),
  }),
  z.object({ audit: z.uuid() }),
]);
export type FullValueQuery = z.infer<typeof fullValueQuery>;

/** The value as text and whether it is JSON; undefined when the plan, review, step or row is not there. */
export async function readFullValue(
  ctx: ServiceContext,
  planId: string,
  query: FullValueQuery,
): Promise<{ text: string; json: boolean } | undefined> {
  if (!z.uuid().safeParse(planId).success) return undefined;
  const tenant = sql`${ctx.tenantId}::uuid`;
  const plan = sql`${planId}::uuid`;
  let statement: ReturnType<typeof sql>;
  let json = true;
  // A proposal's field is indented here, not by jsonb_pretty, which would reorder its keys.
  let indent = false;
  if ("review" in query) {
    json = query.part === "proposal";
    // One field is indented; the whole proposal is sent as stored, keeping
    // every key in the agent's order (JSON.parse would move integer-like ones).
    indent = query.part === "proposal" && query.field !== undefined;
    const value =
      query.part !== "proposal"
        ? { summary: sql`r.summary`, instructions: sql`s.instructions` }[query.part]
        : query.field === undefined
          ? sql`r.proposed_result::text`
          : sql`(r.proposed_result -> ${query.field})::text`;
    statement = sql`select ${value} as value
      from review_request r join plan_step s on s.id = r.step_id
      where r.id = ${query.review}::uuid and r.plan_id = ${plan} and r.tenant_id = ${tenant}`;
  } else if ("step" in query) {
    json = !["instructions", "resultSummary", "failureReason"].includes(query.part);
    const value = {
      instructions: sql`s.instructions`,
      resultSummary: sql`s.result_summary`,
      failureReason: sql`s.failure_reason`,
      result: sql`jsonb_pretty(s.result)`,
      report: sql`jsonb_pretty(s.step_execution_report)`,
      arguments: sql`jsonb_pretty(s.arguments)`,
      inputs: sql`jsonb_pretty(s.inputs)`,
      outputSchema: sql`jsonb_pretty(s.output_schema)`,
    }[query.part];
    statement = sql`select ${value} as value from plan_step s
      where s.id = ${query.step}::uuid and s.plan_id = ${plan} and s.tenant_id = ${tenant}`;
  } else {
    statement = sql`select jsonb_pretty(a.payload) as value from plan_audit_log a
      where a.id = ${query.audit}::uuid and a.plan_id = ${plan} and a.tenant_id = ${tenant}`;
  }
  const [row] = await selectRows(ctx.db, z.object({ value: z.string().nullable() }), statement);
  if (!row || row.value === null) return undefined;
  return { text: indent ? JSON.stringify(JSON.parse(row.value), null, 2) : row.value, json };
}
