/**
 * The one shape of a list that pages: `cursor` in, `nextCursor` out
 * (docs/architecture.md, "To add a …"). A cursor is the last row's
 * position in the list's order, opaque to the caller; reading on from it
 * (keyset) neither skips nor repeats a row when rows are added meanwhile, as
 * an offset would. A list ordered by a time that changes (list_active_plans
 * and the plans list, by when a plan last changed) shows a row where it stands
 * at each read: one that changed between two pages moves to the front, and the
 * pages after do not show it again. (A submit within a second of the plan's
 * last write keeps its time, `planActivityAt`: such a plan may stay put.)
 */
import "server-only";
import { and, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { AppError } from "../../plan-engine/app-error";
import { fitting } from "./bounded";

// No length limit here: a long cursor is refused by `decodeCursor` with the
// refusal a page shows (a link to its first page), not as a bad form.
export const cursorField = z
  .string()
  .optional()
  .describe("The previous nextCursor; left out, the first page.");

/** Passed back as cursor to read the next page; null when this page is the last. */
export const nextCursorField = z.string().nullable();

/**
 * A row's position: the list it belongs to (so a cursor of another list, or
 * of an older form, is refused rather than read as a place in this one), its
 * time to the microsecond (as PostgreSQL keeps it) or its sequence number, and
 * its id.
 */
// At most 18 digits: within a bigint and PostgreSQL's timestamps, so an edited
// cursor is refused here rather than failing in the database.
const position = z.tuple([z.string(), z.string().regex(/^\d{1,18}$/), z.uuid()]);

/** The answer's field that gives the cursor `field` takes: nextCursor for cursor, artifactsNextCursor for artifactsCursor. */
const nextCursorName = (field: string) =>
  field === "cursor" ? "nextCursor" : field.replace(/Cursor$/, "NextCursor");

/** The VALIDATION_ERROR for a cursor this list did not give; `field` is the input that carried it. */
function cursorRefused(field: string): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    `${field} is not one this list gave: pass the previous answer's ${nextCursorName(field)}, or leave it out for the first page.`,
    { field, cursorRefused: true },
  );
}

/**
 * The list and the order it pages in. `list` names the list, and its cursors
 * carry the name: a cursor is read only by the list that gave it, so two lists
 * of the same rows in the same order (list_active_plans and the plans page)
 * refuse each other's. One name per list, however many answers give its
 * cursor (a plan's sources: the contexts, read_evidence and the plan page); no
 * two lists share one (pagination.test.ts). The order: a time column (`at`;
 * or a whole-number sequence such as the audit trail's, `sequence: true`) and
 * the id that breaks its ties; newest (largest) first unless `direction` is "asc".
 */
export type PageOrder = {
  list: string;
  at: PgColumn;
  sequence?: true;
  id: PgColumn;
  direction?: "asc" | "desc";
};

/**
 * What a paged read selects beside its own columns (`position`), the
 * condition that starts after `cursor` (undefined: the first page), the order,
 * and `pageOf` for the `limit + 1` rows read. `field` names the input that
 * carries the cursor in a refusal.
 */
export function keyset(order: PageOrder, cursor: string | undefined, field = "cursor") {
  const { list } = order;
  const direction = order.direction ?? "desc";
  const at = order.sequence
    ? sql<string>`${order.at}::text`
    : sql<string>`(extract(epoch from ${order.at}) * 1000000)::bigint::text`;
  let where: SQL | undefined;
  if (cursor !== undefined) {
    const after = decodeCursor(cursor, list, field);
    const afterAt = order.sequence
      ? sql`${after.at}::bigint`
      : sql`timestamptz 'epoch' + ${after.at}::bigint * interval '1 microsecond'`;
    const beyond = sql.raw(direction === "desc" ? "<" : ">");
    where = sql`(${order.at}, ${order.id}) ${beyond} (${afterAt}, ${after.id}::uuid)`;
  }
  /** The page (the first `limit` rows) and the cursor after its last row, if more follow. */
  function pageOf<Row extends Positioned>(
    rows: Row[],
    limit: number,
  ): { items: Row[]; nextCursor: string | null } {
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    const nextCursor =
      rows.length > limit && last
        ? Buffer.from(JSON.stringify([list, last.positionAt, last.positionId])).toString(
            "base64url",
          )
        : null;
    return { items, nextCursor };
  }
  return {
    position: { positionAt: at, positionId: sql<string>`${order.id}::text` },
    where,
    orderBy: [sql`${order.at} ${sql.raw(direction)}`, sql`${order.id} ${sql.raw(direction)}`],
    pageOf,
    /**
     * A page within a size: the first rows (at most `limit`) whose `shown`
     * values fit in `budget` bytes of JSON text, at least one, and the cursor
     * after the last of them; the rows beyond are the next page's.
     */
    fitOf<Row extends Positioned>(
      rows: Row[],
      limit: number,
      budget: number,
      shown: (row: Row) => unknown,
    ) {
      const fit = fitting(rows.slice(0, limit), budget, shown);
      return pageOf(rows.slice(0, fit + 1), fit);
    },
  };
}

/** A row read with a keyset's `position`. */
type Positioned = { positionAt: string; positionId: string };

/** One page of `table`'s whole rows that match `where`, in `page`'s order, and the next cursor. */
export async function readPage<Table extends PgTable>(
  db: Executor,
  table: Table,
  where: SQL | undefined,
  page: ReturnType<typeof keyset>,
  limit: number,
) {
  return page.pageOf(
    await db
      .select({ ...getTableColumns(table), ...page.position })
      // Widened only for drizzle's generic check; the columns above keep the table's type.
      .from(table as PgTable)
      .where(and(where, page.where))
      .orderBy(...page.orderBy)
      .limit(limit + 1),
    limit,
  );
}

/** Longer than any cursor a list gives (a list's short name, 18 digits and an id, encoded). */
const MAX_CURSOR_CHARS = 500;

function decodeCursor(cursor: string, list: string, field: string) {
  if (cursor.length > MAX_CURSOR_CHARS) throw cursorRefused(field);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw cursorRefused(field);
  }
  const decoded = position.safeParse(json);
  if (!decoded.success || decoded.data[0] !== list) throw cursorRefused(field);
  return { at: decoded.data[1], id: decoded.data[2] };
}

/** Whether an error is a refused cursor (a page answers it with a link to its first page). */
export function isCursorRefused(error: unknown): error is AppError {
  return error instanceof AppError && error.metadata.cursorRefused === true;
}

/**
 * A paged read with filters, or what refused its query as a value for the page
 * to show: its cursor, or its filters (a VALIDATION_ERROR); any other failure
 * as it was.
 */
export async function orQueryRefused<T>(read: Promise<T>): Promise<T | AppError> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof AppError && error.code === "VALIDATION_ERROR") return error;
    throw error;
  }
}

/** A paged read, or its refused cursor as a value for the page to show; any other failure as it was. */
export async function orCursorRefused<T>(read: Promise<T>): Promise<T | AppError> {
  try {
    return await read;
  } catch (error) {
    if (isCursorRefused(error)) return error;
    throw error;
  }
}
