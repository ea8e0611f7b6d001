/**
 * A test's raw SQL read: the rows are not parsed, because the test's own
 * assertions check them at once (the code under test parses its reads with a
 * schema, lib/db/rows.ts).
 */
import type { SQL } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "@/lib/db/client";
import { selectRows } from "@/lib/db/rows";

export function readRows<Row>(db: Executor, query: SQL): Promise<Row[]> {
  return selectRows(db, z.custom<Row>(), query);
}
