/**
 * search_sources (docs/execution-flow.md; docs/execution-loop.md,
 * "Executing the step"): hybrid search over the tenant's artifact library.
 *
 * Two ranked candidate lists, fused by reciprocal rank fusion
 * (score = sum of 1 / (60 + rank)), in one statement:
 *
 * - Full text: the stored, weighted `search_vector` (title A, body B, `english`
 *   stemming) against `websearch_to_tsquery`, ranked by `ts_rank_cd`. When no
 *   artifact holds every term, the same terms OR-ed stand in, so a query with
 *   one word too many still finds the artifacts with the others.
 * - Trigrams: `word_similarity(query, title)` through the title's trigram index,
 *   which forgives typos ("recyling") that stemming cannot. The least similarity
 *   that matches (0.4) is set where the statement runs
 *   (`drizzle/0042_search_json.sql`, with the reason for its value).
 *
 * Each list is cut to CANDIDATES rows before fusion, and snippets
 * (`ts_headline`) are built only for the rows returned, so the cost stays
 * bounded by the index lookups as the library grows.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { executedText, isoTime, run, statement } from "../../db/statement";
import type { ServiceContext } from "../shared/context";
import { planIdField } from "../shared/fields";
import { parseInput } from "../shared/validation";
import { artifactTypeField } from "./store-research";

/** The RRF constant of Cormack et al.; 60 keeps a single list's top ranks from dominating. */
const RRF_K = 60;
/** How many rows each ranked list contributes before fusion. */
const CANDIDATES = 100;
/**
 * How many full-text matches are ranked at most. Ranking reads each match's
 * vector, so a query of common words ("cost") would otherwise touch a large
 * share of the library; with the pool the work stays bounded whatever the
 * query, while a specific query (fewer matches than the pool) is ranked exactly.
 * An unordered LIMIT lets PostgreSQL stop its scan early under any plan. The
 * price: a query matching more than the pool is ranked over its first matches
 * in table order, not all of them. Table order is what a bitmap scan yields and
 * what a sequential scan from the first block yields, so the pool (and so the
 * ranking) does not depend on the plan; search_json's settings keep scans from
 * starting anywhere else.
 */
const RANKING_POOL = 500;
/**
 * The same bound for the trigram side, smaller because every candidate title is
 * read from the table and rechecked by computing its word similarity. A typo
 * query matches few titles and is ranked exactly; a common word fills the pool,
 * and then the full-text side, which matches that word exactly, carries the
 * ranking. Measured on 100,000 artifacts in the embedded database, pools of
 * 500 and 200 instead of 1,000 and 500 cut the median search from 31 to 21 ms.
 */
const TITLE_POOL = 200;
/** ts_headline parses the whole text it is given; a long artifact is cut first. */
const HEADLINE_SOURCE_CHARS = 20_000;
const FALLBACK_SNIPPET_CHARS = 240;
const MAX_TERMS = 32;

export const searchSourcesInput = z.object({
  query: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(500)
    .describe(
      'Key terms, e.g. "heat pump efficiency"; web-search syntax works ("phrase", -excluded, or).',
    ),
  limit: z.int().min(1).max(50).optional().describe("Default 10."),
  planId: planIdField.optional(),
  artifactType: artifactTypeField.optional(),
  since: z
    .union([z.iso.datetime({ offset: true }), z.iso.date()])
    // PostgreSQL has no year 0 (1 BC): it would refuse the comparison.
    .refine((since) => !since.startsWith("0000"), "the year must be 0001 or later")
    .optional()
    .describe("Only those stored since this ISO date or date-time."),
});

/** The answer: the best-matching artifacts, best first (the MCP tool's output schema). */
export const searchSourcesOutput = z.object({
  results: z.array(
    z.object({
      artifactId: z.string(),
      title: z.string(),
      artifactType: z.string(),
      snippet: z.string(),
      score: z.number(),
      researchQuestion: z.string().nullable(),
      createdAt: z.string(),
      planId: z.string().nullable(),
      stepId: z.string().nullable(),
      confidence: z.number().nullable(),
      sourceUrls: z.array(z.string()),
    }),
  ),
});

export type SearchResults = z.infer<typeof searchSourcesOutput>;

/**
 * The query's words, split into those it asks for and those it excludes
 * (`-word`, as websearch_to_tsquery reads them). The wanted words feed the OR
 * fallback, each as its own `plainto_tsquery` so punctuation and stop words
 * cannot make the combined query invalid, and the trigram side, which must not
 * match an excluded word; the excluded ones filter the trigram side's hits.
 */
export function queryWords(query: string): { wanted: string[]; excluded: string[] } {
  const wanted: string[] = [];
  const excluded: string[] = [];
  // A quoted phrase or a bare token, each with an optional leading minus.
  for (const match of query.matchAll(/(-?)"([^"]*)"?|(-?)([^\s"]+)/g)) {
    const quoted = match[2] !== undefined;
    const negated = (quoted ? match[1] : match[3]) === "-";
    const words = (quoted ? match[2] : match[4])?.match(/[\p{L}\p{N}]+/gu) ?? [];
    if (negated) excluded.push(...words);
    else wanted.push(...words.filter((word) => quoted || word.toLowerCase() !== "or"));
  }
  return { wanted: wanted.slice(0, MAX_TERMS), excluded: excluded.slice(0, MAX_TERMS) };
}

function anyOf(words: string[]): SQL {
  if (words.length === 0) return sql`''::tsquery`;
  return sql.join(
    words.map((word) => sql`plainto_tsquery('english', ${word}::text)`),
    sql` || `,
  );
}

const searchRow = z.object({
  id: z.string(),
  title: z.string(),
  artifact_type: z.string(),
  snippet: z.string(),
  score: z.union([z.number(), z.string()]),
  research_question: z.string().nullable(),
  created_at: isoTime,
  plan_id: z.string().nullable(),
  step_id: z.string().nullable(),
  confidence: z.number().nullable(),
  source_urls: z.union([z.array(z.string()), z.string()]),
});

/** How `search_json` answers a search that failed in the database. */
const failedSearch = z.object({ failed: z.object({ code: z.string(), message: z.string() }) });

/** The search's rows through `search_json`, in the order it ranked them. */
const search = statement(
  "search the library",
  `select found from search_json($1::text, $2::text[]) with ordinality as hit(found, n) order by n`,
  z.object({ found: z.union([searchRow, failedSearch]) }),
);

export async function searchSources(
  ctx: ServiceContext,
  raw: z.input<typeof searchSourcesInput>,
): Promise<SearchResults> {
  const input = parseInput(searchSourcesInput, raw);
  const limit = input.limit ?? 10;
  const words = queryWords(input.query);
  // A query must ask for something: exclusions alone would match most of the library.
  if (words.wanted.length === 0) return { results: [] };
  const titleQuery = words.wanted.join(" ");

  // The same filters inside each candidate list, so every list fills its
  // CANDIDATES rows with artifacts the caller can be shown. Every value
  // reaches the statement as text (`executedText`), so each is cast here.
  const filters: SQL[] = [sql`a.tenant_id = ${ctx.tenantId}::uuid`];
  if (input.planId) filters.push(sql`a.plan_id = ${input.planId}::uuid`);
  if (input.artifactType) filters.push(sql`a.artifact_type = ${input.artifactType}::text`);
  if (input.since)
    filters.push(sql`a.created_at >= ${new Date(input.since).toISOString()}::timestamptz`);
  const where = sql.join(filters, sql` and `);

  // Constants go into the text, not as parameters, so the planner sees them.
  const candidates = sql.raw(String(CANDIDATES));
  const pool = sql.raw(String(RANKING_POOL));
  const titlePool = sql.raw(String(TITLE_POOL));
  const rrfK = sql.raw(String(RRF_K));
  const headlineChars = sql.raw(String(HEADLINE_SOURCE_CHARS));
  const snippetChars = sql.raw(String(FALLBACK_SNIPPET_CHARS));
  const query = sql`
    -- Inlined where used, so the per-call plan sees the tsqueries as constants:
    -- a pool of common words (most queries) is then filled by a sequential scan
    -- that stops after RANKING_POOL matches, where a bitmap scan must first
    -- collect every match from the index (measured at 100,000 artifacts: 3 ms
    -- against 9 for a three-word query matching 12% of the library), and rare
    -- words still go through the index. Materialised, q hid them from the planner.
    with q as not materialized (
      select websearch_to_tsquery('english', ${input.query}::text) as all_terms,
             (${anyOf(words.wanted)}) as any_term, (${anyOf(words.excluded)}) as excluded
    ),
    fts_all_pool as (
      select a.id, a.search_vector
      from research_artifact a, q
      where numnode(q.all_terms) > 0 and a.search_vector @@ q.all_terms and ${where}
      limit ${pool}
    ),
    fts_all as (
      select id, ts_rank_cd(search_vector, q.all_terms, 1) as score
      from fts_all_pool, q
      order by score desc
      limit ${candidates}
    ),
    fts_any_pool as (
      select a.id, a.search_vector
      from research_artifact a, q
      where not exists (select 1 from fts_all_pool)
        and numnode(q.any_term) > 0 and a.search_vector @@ q.any_term and ${where}
      limit ${pool}
    ),
    fts_any as (
      select id, ts_rank_cd(search_vector, q.any_term, 1) as score
      from fts_any_pool, q
      order by score desc
      limit ${candidates}
    ),
    fts as (
      select id, row_number() over (order by score desc, id) as rank
      from (select * from fts_all union all select * from fts_any) matched
    ),
    trgm as (
      select id, row_number() over (order by similarity desc, id) as rank
      from (
        select id, similarity
        from (
          select a.id, word_similarity(${titleQuery}::text, a.title) as similarity
          from research_artifact a, q
          -- Stop words alone ("the of") would match titles by their letters, not their meaning.
          where numnode(q.any_term) > 0 and ${titleQuery}::text <% a.title and ${where}
            and not (numnode(q.excluded) > 0 and a.search_vector @@ q.excluded)
          limit ${titlePool}
        ) title_pool
        order by similarity desc
        limit ${candidates}
      ) by_title
    ),
    fused as (
      select id, sum(1.0 / (${rrfK} + rank))::float8 as score, bool_or(in_fts) as in_fts,
             min(rank) filter (where in_fts) as fts_rank
      from (
        select id, rank, true as in_fts from fts
        union all
        select id, rank, false as in_fts from trgm
      ) ranked
      group by id
      order by score desc, fts_rank asc nulls last
      limit ${limit}::int
    )
    select a.id, a.title, a.artifact_type, f.score, a.created_at, a.plan_id, a.step_id,
           a.confidence, a.source_urls, p.research_question,
           case
             when f.in_fts then ts_headline(
               'english', left(a.content_text, ${headlineChars}), q.any_term,
               'StartSel=**, StopSel=**, MaxWords=40, MinWords=15, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … "'
             )
             when length(a.content_text) > ${snippetChars}
               then left(a.content_text, ${snippetChars}) || '…'
             else a.content_text
           end as snippet
    from fused f
    join research_artifact a on a.id = f.id
    cross join q
    left join research_plan p on p.id = a.plan_id and p.tenant_id = ${ctx.tenantId}::uuid
    order by f.score desc, f.fts_rank asc nulls last, a.created_at desc`;

  // Run by the database's search_json, with the settings the search needs
  // for its own execution only, and planned on each call with its values in
  // view (drizzle/0042_search_json.sql): one statement, which leaves nothing
  // behind in a transaction it runs in (a server-run step's), and does not
  // abort it when the search fails.
  const rows: z.infer<typeof searchRow>[] = [];
  for (const { found } of await run(ctx.db, search, executedText(query))) {
    if ("failed" in found) {
      // Raised as the driver raises a database error, its SQLSTATE as `code`,
      // so the doors read it as they would have (a deadline: the database
      // unavailable for now, lib/db/unavailable.ts), with the caller's
      // transaction still usable.
      throw Object.assign(new Error(found.failed.message), { code: found.failed.code });
    }
    rows.push(found);
  }
  return {
    results: rows.map((row) => ({
      artifactId: row.id,
      title: row.title,
      artifactType: row.artifact_type,
      snippet: row.snippet,
      score: Number(row.score),
      researchQuestion: row.research_question,
      createdAt: row.created_at,
      planId: row.plan_id,
      stepId: row.step_id,
      confidence: row.confidence === null ? null : Number(row.confidence),
      sourceUrls:
        typeof row.source_urls === "string" ? JSON.parse(row.source_urls) : row.source_urls,
    })),
  };
}
