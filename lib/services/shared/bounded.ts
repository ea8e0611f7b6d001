/**
 * What keeps an answer that gathers many of a plan's records (its contexts,
 * its page) bounded however much the plan holds (docs/evidence.md, "Who reads
 * it"; docs/execution-loop.md, "Reading a plan back"): long values cut in the
 * database to their first characters, lists paged within a number of bytes of
 * JSON text, and one value read whole a page of text at a time.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";

/** How much of a long text or JSON value a gathering answer shows: its first 2,000 characters. */
export const PREVIEW_CHARS = 2_000;

/**
 * A column as a gathering answer reads it: a text column's first `chars`
 * characters; a JSON one whole when its text is no longer, else
 * `{ "preview": <its first chars characters of JSON text> }`. With `<name>Cut`
 * beside it, so the answer can say which values it shortened. Cut in the
 * database, so a read never carries a long value to the server.
 */
export function cutColumn(column: PgColumn, chars = PREVIEW_CHARS) {
  const n = sql.raw(String(chars));
  if (column.dataType === "json") {
    // The preview's type is the column's: a json column (a proposal, kept in
    // the agent's key order) must not meet a jsonb branch in one CASE.
    const build = sql.raw(
      column.getSQLType() === "json" ? "json_build_object" : "jsonb_build_object",
    );
    return {
      value: sql`case when char_length(${column}::text) <= ${n} then ${column}
        else ${build}('preview', left(${column}::text, ${n})) end`.mapWith(column),
      cut: sql<boolean>`coalesce(char_length(${column}::text) > ${n}, false)`,
    };
  }
  return {
    value: sql<string | null>`left(${column}, ${n})`,
    cut: sql<boolean>`coalesce(char_length(${column}) > ${n}, false)`,
  };
}

/** Each column of `columns` cut (`cutColumn`), as drizzle select fields: `name` and `nameCut`. */
export function cutColumns<Names extends string>(
  columns: Record<Names, PgColumn>,
  chars: Partial<Record<Names, number>> = {},
) {
  const fields: Record<string, SQL | SQL.Aliased> = {};
  for (const name of Object.keys(columns) as Names[]) {
    const { value, cut } = cutColumn(columns[name], chars[name]);
    fields[name] = value;
    fields[`${name}Cut`] = cut;
  }
  return fields as Record<Names | `${Names}Cut`, SQL>;
}

/** The names of `names` whose values a row read with `cutColumns` shortened, in order. */
export const shortenedOf = <Names extends string>(
  row: Record<`${Names}Cut`, unknown>,
  names: readonly Names[],
): Names[] => names.filter((name) => row[`${name}Cut`] === true);

/** How many of `items` fit in `budget` bytes of JSON text (at least one). */
export function fitting(items: readonly unknown[], budget: number): number {
  let bytes = 0;
  for (let i = 0; i < items.length; i++) {
    bytes += Buffer.byteLength(JSON.stringify(items[i]), "utf8");
    if (bytes > budget) return Math.max(i, 1);
  }
  return items.length;
}

/**
 * The first rows of `rows` (at most `limit`, at least one) whose views fit in
 * `budget` bytes of JSON text, and the cursor after them: a list read by
 * keyset (`pageOf`, lib/services/shared/pagination.ts) whose rows vary in size.
 */
export function fitPage<Row extends { positionAt: string; positionId: string }, View>(
  page: { pageOf: (rows: Row[], limit: number) => { nextCursor: string | null } },
  rows: { row: Row; view: View }[],
  budget: number,
  limit: number,
) {
  const fit = Math.min(
    fitting(
      rows.slice(0, limit).map(({ view }) => view),
      budget,
    ),
    limit,
  );
  // Rows beyond what fits are left for the next page: the cursor follows the last one shown.
  const { nextCursor } = page.pageOf(
    rows.slice(0, fit + 1).map(({ row }) => row),
    fit,
  );
  return { views: rows.slice(0, fit).map(({ view }) => view), nextCursor };
}

/** The most JSON text of one page of a long value read whole (read_evidence's `text`). */
export const TEXT_PAGE_BYTES = 256 * 1024;

/** The bytes one character (a code point) takes in a JSON string, as JSON.stringify writes it. */
function jsonCharBytes(codePoint: number): number {
  if (codePoint === 0x22 || codePoint === 0x5c) return 2;
  if (codePoint < 0x20) return [0x08, 0x09, 0x0a, 0x0c, 0x0d].includes(codePoint) ? 2 : 6;
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  // A lone surrogate is written as \udxxx.
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return 6;
  return codePoint < 0x10000 ? 3 : 4;
}

/**
 * The longest start of `text` whose JSON text fits in `budget` bytes (at
 * least one character), and how many characters (code points, as PostgreSQL
 * counts them) it holds. One pass.
 */
export function fitText(text: string, budget: number): { text: string; chars: number } {
  let bytes = 0;
  let chars = 0;
  let end = 0;
  for (const character of text) {
    const codePoint = character.codePointAt(0) ?? 0;
    bytes += jsonCharBytes(codePoint);
    if (bytes > budget && chars > 0) break;
    chars++;
    end += character.length;
  }
  return { text: text.slice(0, end), chars };
}
