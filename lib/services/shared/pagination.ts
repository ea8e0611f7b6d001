/**
 * The one shape of a list that pages: `cursor` in, `nextCursor` out
 * (docs/architecture.md, "To add a …"). A cursor is the last row's
 * position in the list's order, opaque to the caller; reading on from it
 * (keyset) neither skips nor repeats a row when rows are added meanwhile, as
 * an offset would.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import { z } from "zod";
import { AppError } from "../../plan-engine/app-error";

export const cursorField = z
  .string()
  .max(500)
  .optional()
  .describe("Where the page starts: the previous answer's nextCursor. Left out, the first page.");

export const nextCursorField = z
  .string()
  .nullable()
  .describe("Pass it as cursor to read the next page; null when this page is the last.");

/** A row's position: its time to the microsecond (as PostgreSQL keeps it) and its id. */
const position = z.tuple([z.string().regex(/^\d{1,20}$/), z.uuid()]);
type Position = z.infer<typeof position>;

function cursorRefused(): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    "cursor is not one this list gave: pass the previous answer's nextCursor, or leave it out for the first page.",
    { field: "cursor" },
  );
}

function decodeCursor(cursor: string): Position {
  try {
    return position.parse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw cursorRefused();
  }
}

/** The columns a list is ordered by, newest first: a time and the id that breaks its ties. */
export type PageOrder = { at: PgColumn; id: PgColumn };

/**
 * What a paged read selects beside its own columns (`position`), the
 * condition that starts after `cursor` (undefined: the first page), and the
 * order; read `limit + 1` rows and give them to `pageOf`.
 */
export function keyset(order: PageOrder, cursor: string | undefined) {
  const at = sql<string>`(extract(epoch from ${order.at}) * 1000000)::bigint::text`;
  const after = cursor ? decodeCursor(cursor) : undefined;
  const where: SQL | undefined = after
    ? sql`(${order.at}, ${order.id}) < (timestamptz 'epoch' + ${after[0]}::bigint * interval '1 microsecond', ${after[1]}::uuid)`
    : undefined;
  return {
    position: { positionAt: at, positionId: sql<string>`${order.id}::text` },
    where,
    orderBy: [sql`${order.at} desc`, sql`${order.id} desc`],
  };
}

/** The page (the first `limit` rows) and the cursor after its last row, if more follow. */
export function pageOf<Row extends { positionAt: string; positionId: string }>(
  rows: Row[],
  limit: number,
): { items: Row[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor =
    rows.length > limit && last
      ? Buffer.from(JSON.stringify([last.positionAt, last.positionId])).toString("base64url")
      : null;
  return { items, nextCursor };
}
