/**
 * One long value of a plan in full, for the pages' "Show all" links: the pages
 * show long payloads shortened (`shorten`, `shortenJson`), so a refresh every
 * few seconds never sends them whole (docs/reviews.md, "Size limits"). Tenant-scoped:
 * another team's id, or one of another plan, reads as not found.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
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

/** A text value shortened in the database, as a `Shortened` JSON object (parse it with shortenedRow). */
export const shortenedSql = (value: SQL) =>
  sql`json_build_object('text', left(${value}, ${sql.raw(String(PREVIEW_CHARS))}),
    'shortened', char_length(${value}) > ${sql.raw(String(PREVIEW_CHARS))},
    'bytes', octet_length(${value}))`;

/** The first `chars` characters of `text` (never half a surrogate pair). */
export function shorten(text: string, chars = PREVIEW_CHARS): Shortened {
  const bytes = Buffer.byteLength(text, "utf8");
  if (text.length <= chars) return { text, shortened: false, bytes };
  const end = /[\ud800-\udbff]/.test(text.charAt(chars - 1)) ? chars - 1 : chars;
  return { text: text.slice(0, end), shortened: true, bytes };
}

/**
 * A JSON value as indented text (JSON.stringify's, two spaces a level),
 * shortened as `shorten` would, with `bytes` the size of the value as stored
 * (its JSON text unindented). Only the characters shown are written: each
 * level of nesting indents every line inside it, so a value nested 90 deep
 * is about 180 times longer indented, and indenting it whole to show its
 * start kept an inbox page of twenty such proposals 2.5-3.4 s on the event
 * loop, another team's ping 1.3-2.2 s (docs/security.md). The walk stops once
 * the text is full; the size is one native, unindented JSON.stringify.
 */
export function shortenJson(value: unknown, chars = PREVIEW_CHARS): Shortened {
  let text = "";
  const full = () => text.length > chars;
  const put = (piece: string) => {
    text += piece.slice(0, chars + 1 - text.length);
  };
  const walk = (node: unknown, depth: number) => {
    if (node === null || typeof node !== "object") {
      put(JSON.stringify(node) ?? "null");
      return;
    }
    const array = Array.isArray(node);
    const record = node as Record<string, unknown>;
    const keys = array ? null : Object.keys(record).filter((key) => record[key] !== undefined);
    const count = array ? node.length : (keys?.length ?? 0);
    if (count === 0) {
      put(array ? "[]" : "{}");
      return;
    }
    put(array ? "[" : "{");
    const indent = " ".repeat(2 * (depth + 1));
    for (let i = 0; i < count && !full(); i++) {
      put(i > 0 ? `,\n${indent}` : `\n${indent}`);
      const key = keys?.[i];
      if (key !== undefined) put(`${JSON.stringify(key)}: `);
      walk(array ? (node[i] ?? null) : record[key ?? ""], depth + 1);
    }
    put(`\n${" ".repeat(2 * depth)}${array ? "]" : "}"}`);
  };
  walk(value, 0);
  const bytes = Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8");
  if (!full()) return { text, shortened: false, bytes };
  const end = /[\ud800-\udbff]/.test(text.charAt(chars - 1)) ? chars - 1 : chars;
  return { text: text.slice(0, end), shortened: true, bytes };
}

/** One field of a proposed result: its key, and its value as indented JSON, shortened. */
export const proposalFieldRow = z.object({ key: z.string(), value: shortenedRow });
export type ProposalField = z.infer<typeof proposalFieldRow>;

/**
 * How much of a proposal is shown with its review: the characters of its
 * fields' values in all, and the most fields. A proposal may be 128 KB of
 * 12,000 short fields or of a few long ones, and the inbox shows a page of them.
 */
export const PROPOSAL_SHOWN_CHARS = 4_000;
export const PROPOSAL_SHOWN_FIELDS = 40;
/** A field whose key is longer is not listed (its link would carry the key): the whole proposal shows it. */
const PROPOSAL_KEY_CHARS = 200;

/**
 * A proposed result's fields as read for showing (`proposalSql`): how many it
 * has, and the first PROPOSAL_SHOWN_FIELDS whose keys are short enough, each
 * with the start of its JSON text (`whole` when that is all of it) and the
 * size of all of it.
 */
export const proposalRead = z.object({
  count: z.number(),
  fields: z.array(
    z.object({ key: z.string(), start: z.string(), whole: z.boolean(), bytes: z.number() }),
  ),
});
export type ProposalRead = z.infer<typeof proposalRead>;

/**
 * A proposal (a json column: it keeps the agent's key order, which jsonb and
 * JSON.parse would not) read for showing, cut in the database: its fields in
 * the agent's order, each value's JSON text to one character past the most a
 * field shows, so a page of 128 KB proposals never reads them whole. Null for
 * a null proposal.
 */
export const proposalSql = (proposal: SQL) =>
  sql`case when ${proposal} is null then null else json_build_object(
    'count', (select count(*) from json_each(${proposal})),
    'fields', coalesce((select json_agg(json_build_object('key', field.key,
        'start', left(field.value::text, ${sql.raw(String(PREVIEW_CHARS + 1))}),
        'whole', char_length(field.value::text) <= ${sql.raw(String(PREVIEW_CHARS + 1))},
        'bytes', octet_length(field.value::text)) order by field.n)
      from (select key, value, n from json_each(${proposal}) with ordinality as each(key, value, n)
        where char_length(key) <= ${sql.raw(String(PROPOSAL_KEY_CHARS))}
        order by n limit ${sql.raw(String(PROPOSAL_SHOWN_FIELDS))}) field), '[]'::json)) end`;

/**
 * The first `chars` characters of JSON.stringify(JSON.parse(json), null, 2),
 * from the start of a JSON text as JSON.stringify writes it (as Cairn stores a
 * proposal): one pass, stopping once `chars` are written, so a value cut in
 * the database shows as its whole would.
 */
export function indentedStart(json: string, chars: number): string {
  let out = "";
  let depth = 0;
  let inString = false;
  const newline = () => `\n${"  ".repeat(depth)}`;
  for (let i = 0; i < json.length && out.length < chars; i++) {
    const c = json.charAt(i);
    if (inString) {
      if (c === "\\") {
        out += c + json.charAt(i + 1);
        i++;
      } else {
        out += c;
        inString = c !== '"';
      }
    } else if (c === '"') {
      out += c;
      inString = true;
    } else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      if (json.charAt(i + 1) === close) {
        out += c + close;
        i++;
      } else {
        depth++;
        out += c + newline();
      }
    } else if (c === "}" || c === "]") {
      depth--;
      out += newline() + c;
    } else if (c === ",") {
      out += `,${newline()}`;
    } else if (c === ":") {
      out += ": ";
    } else {
      out += c;
    }
  }
  return out;
}

/**
 * A proposed result field by field, in the order the agent sent them, each
 * shortened on its own as indented JSON, so one long field does not hide all
 * the keys after it; within PROPOSAL_SHOWN_CHARS and PROPOSAL_SHOWN_FIELDS,
 * with how many fields are left out (`omitted`: the whole proposal has them).
 * A field whose key is longer than PROPOSAL_KEY_CHARS is left out.
 */
export function proposalFields(read: ProposalRead): { fields: ProposalField[]; omitted: number } {
  const fields: ProposalField[] = [];
  let room = PROPOSAL_SHOWN_CHARS;
  for (const field of read.fields) {
    if (room <= 0) break;
    const chars = Math.min(PREVIEW_CHARS, room);
    const shown = field.whole
      ? // Indented only as far as it is shown: a value nested deep is many times longer indented.
        shortenJson(JSON.parse(field.start), chars)
      : // Longer than any field shows, indented or not: its size is the whole's as stored.
        { ...shorten(indentedStart(field.start, chars + 1), chars), bytes: field.bytes };
    room -= shown.text.length;
    fields.push({ key: field.key, value: shown });
  }
  return { fields, omitted: read.count - fields.length };
}

/** Which value: a part of a review (one field of its proposal), of a step, or an audit row's payload. */
export const fullValueQuery = z.union([
  z.object({ review: z.uuid(), part: z.enum(["summary", "instructions"]) }),
  // Without a field: the whole proposal.
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
  // Each read below is by its row's id: the plan and the tenant are filters
  // no index serves (IS NOT DISTINCT FROM, lib/db/same-tenant.ts), so the
  // primary key serves it and not the plan's or the tenant's index.
  const tenant = sql`${ctx.tenantId}::uuid`;
  const plan = sql`${planId}::uuid`;
  let statement: ReturnType<typeof sql>;
  let json = true;
  // A proposal's field is indented here, not by jsonb_pretty, which would reorder its keys.
  let indent = false;
  if ("review" in query) {
    json = indent = query.part === "proposal";
    const value =
      query.part !== "proposal"
        ? { summary: sql`r.summary`, instructions: sql`s.instructions` }[query.part]
        : query.field === undefined
          ? sql`r.proposed_result::text`
          : sql`(r.proposed_result -> ${query.field})::text`;
    statement = sql`select ${value} as value
      from review_request r join plan_step s on s.id = r.step_id
      where r.id = ${query.review}::uuid and r.plan_id is not distinct from ${plan}
        and r.tenant_id is not distinct from ${tenant}`;
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
      where s.id = ${query.step}::uuid and s.plan_id is not distinct from ${plan}
        and s.tenant_id is not distinct from ${tenant}`;
  } else {
    statement = sql`select jsonb_pretty(a.payload) as value from plan_audit_log a
      where a.id = ${query.audit}::uuid and a.plan_id is not distinct from ${plan}
        and a.tenant_id is not distinct from ${tenant}`;
  }
  const [row] = await selectRows(ctx.db, z.object({ value: z.string().nullable() }), statement);
  if (!row || row.value === null) return undefined;
  return { text: indent ? JSON.stringify(JSON.parse(row.value), null, 2) : row.value, json };
}
