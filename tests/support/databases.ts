/**
 * Fresh, migrated databases for integration tests, on both backends Cairn runs
 * on: PGlite (Postgres 18 inside, the embedded default) and a real PostgreSQL 15
 * server (production). Each call gets its own empty database.
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";

export const BACKENDS = ["pglite", "postgres"] as const;
export type Backend = (typeof BACKENDS)[number];

/** The throwaway cluster's URL, set by the test runner's global setup (vitest and Playwright alike). */
export function testPostgresUrl(): string {
  const url = process.env.CAIRN_TEST_POSTGRES_URL;
  if (!url)
    throw new Error("CAIRN_TEST_POSTGRES_URL is not set: the global setup starts PostgreSQL 15.");
  return url;
}

/** Creates an empty database in the test cluster and returns its URL. */
export async function createPostgresDatabase(): Promise<string> {
  const adminUrl = testPostgresUrl();
  const name = `cairn_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return adminUrl.replace(/\/[^/]*$/, `/${name}`);
}

export async function freshDatabase(backend: Backend): Promise<DatabaseHandle> {
  const handle =
    backend === "pglite"
      ? await openDatabase({ kind: "pglite" })
      : await openDatabase({ kind: "postgres", url: await createPostgresDatabase() });
  await handle.migrate();
  return handle;
}

/**
 * A fresh PostgreSQL database with `setup`'s statements run, Cairn's handle on
 * it, and a second client (`other`) for a test to hold locks from.
 */
export async function postgresWithHolder(
  setup: readonly string[],
): Promise<{ handle: DatabaseHandle; other: postgres.Sql; close(): Promise<void> }> {
  const url = await createPostgresDatabase();
  const handle = await openDatabase({ kind: "postgres", url });
  await handle.migrate();
  const other = postgres(url, { max: 2, onnotice: () => {} });
  for (const text of setup) await other.unsafe(text);
  return {
    handle,
    other,
    async close() {
      await other.end();
      await handle.close();
    },
  };
}
