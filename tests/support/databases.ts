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
