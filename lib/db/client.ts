/**
 * One database client for the whole app: PGlite (embedded Postgres) in
 * CAIRN_DATA_DIR when DATABASE_URL is unset, postgres.js when it is set.
 * Services receive a `Database` and open their own transactions; nothing
 * outside lib/ imports this module's client directly.
 */
import "server-only";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { env } from "../env";
import { acquireEmbeddedLock } from "./embedded-lock";
import { preparingPglite } from "./pglite-prepared";
import { type ListenEvent, openPostgresClient } from "./postgres-client";
import * as schema from "./schema";

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** Either the database or an open transaction: query helpers accept both. */
export type Executor = Database | Transaction;

export type { ListenEvent };

export type DatabaseHandle = {
  db: Database;
  kind: "pglite" | "postgres";
  /**
   * PostgreSQL's notifications on `channel`: each one, and whether they are
   * heard now ("lost" while a server database's listening connection is
   * down, and never "listening" without named prepared statements: see
   * postgres-client.ts).
   */
  listen(channel: string, onEvent: (event: ListenEvent) => void): void;
  migrate(): Promise<void>;
  close(): Promise<void>;
};

export const MIGRATIONS_FOLDER = join(process.cwd(), "drizzle");

export type OpenOptions =
  | {
      kind: "postgres";
      url: string;
      maxConnections?: number;
      /**
       * Named prepared statements (CAIRN_PREPARED_STATEMENTS, on unless false):
       * off behind a transaction pooler that cannot carry them.
       */
      preparedStatements?: boolean;
      /** Called for every statement sent (the benchmark counts round trips with it). */
      onQuery?: (query: string) => void;
    }
  /** `dataDir` undefined: an in-memory database (tests). */
  | { kind: "pglite"; dataDir?: string };

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  if (options.kind === "postgres") {
    const client = await openPostgresClient({
      url: options.url,
      maxConnections: options.maxConnections ?? 10,
      preparedStatements: options.preparedStatements ?? true,
      onQuery: options.onQuery,
    });
    const db = drizzlePostgres({ client: client.sql, schema });
    return {
      db: db as unknown as Database,
      kind: "postgres",
      listen: client.listen,
      migrate: () =>
        client.withoutDeadline(() => migratePostgres(db, { migrationsFolder: MIGRATIONS_FOLDER })),
      close: () => client.end(),
    };
  }

  const release = options.dataDir ? acquireEmbeddedLock(options.dataDir) : () => {};
  try {
    // pg_trgm ships with PGlite but must be loaded at start for the migration's
    // CREATE EXTENSION (search_sources' trigram matching) to find it.
    const client = await PGlite.create(options.dataDir, { extensions: { pg_trgm } });
    // Prepared and their plans reused as on PostgreSQL (see pglite-prepared.ts).
    const db = drizzlePglite({ client: preparingPglite(client), schema });
    return {
      db: db as unknown as Database,
      kind: "pglite",
      // One process holds the embedded database: its connection is never lost.
      listen: (channel, onEvent) => {
        client
          .listen(channel, () => onEvent("notified"))
          .then(() => onEvent("listening"))
          .catch(() => onEvent("lost"));
      },
      migrate: () => migratePglite(db, { migrationsFolder: MIGRATIONS_FOLDER }),
      close: async () => {
        await client.close();
        release();
      },
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** The database this process was configured for (see lib/env.ts). */
export function configuredDatabase(): OpenOptions {
  const { DATABASE_URL, CAIRN_DATA_DIR, CAIRN_PREPARED_STATEMENTS } = env();
  return DATABASE_URL
    ? { kind: "postgres", url: DATABASE_URL, preparedStatements: CAIRN_PREPARED_STATEMENTS }
    : { kind: "pglite", dataDir: CAIRN_DATA_DIR };
}

// Cached on globalThis so dev-mode module reloads reuse the open database
// instead of opening the embedded folder twice.
const globalForDb = globalThis as typeof globalThis & {
  __cairnDb?: Promise<DatabaseHandle>;
};

/**
 * The process-wide database. The embedded database migrates itself on first open;
 * a server database is migrated by `npm run db:migrate`, once per deploy.
 */
export function getDatabaseHandle(): Promise<DatabaseHandle> {
  globalForDb.__cairnDb ??= (async () => {
    const handle = await openDatabase(configuredDatabase());
    if (handle.kind === "pglite") await handle.migrate();
    return handle;
  })();
  globalForDb.__cairnDb.catch(() => {
    globalForDb.__cairnDb = undefined;
  });
  return globalForDb.__cairnDb;
}

export async function getDb(): Promise<Database> {
  return (await getDatabaseHandle()).db;
}

export async function closeDb(): Promise<void> {
  const pending = globalForDb.__cairnDb;
  globalForDb.__cairnDb = undefined;
  if (pending) await (await pending).close();
}
