/**
 * Starts Cairn's production server (build/server.cjs, built by `npm run build`) on a
 * free port over a fresh database of either backend, seeded with two tenants,
 * and stops it afterwards. Seeding happens before the server starts because the
 * embedded database can be open in only one process at a time.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { apiKeys } from "@/lib/db/schema";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import { type Backend, createPostgresDatabase } from "./databases";
import { type NextProcess, startNextProcess } from "./next-process";

export type Tenant = {
  tenantId: string;
  userId: string;
  /** The tenant's admin. */
  email: string;
  /** A researcher of the same tenant. */
  researcherEmail: string;
  key: string;
  apiKeyId: string;
};

/** Every seeded user's password. */
export const SEED_PASSWORD = "a long enough password";

/** One more production server on an app's database (see RunningApp.startAnotherInstance). */
export type AppInstance = {
  url: string;
  mcpUrl: string;
  port: number;
  /** Stops this instance only. */
  stop(): Promise<void>;
};

export type RunningApp = {
  backend: Backend;
  /** The embedded database's folder (unused on the postgres backend). */
  dataDir: string;
  url: string;
  mcpUrl: string;
  port: number;
  /** Opens the server's database; on the embedded backend only after `stopServer()`. */
  openDatabase(): Promise<DatabaseHandle>;
  /** What the running server has printed so far (stdout and stderr). */
  serverOutput(): string;
  /** Stops the server and keeps its database. */
  stopServer(): Promise<void>;
  /** Starts the server again after stopServer(), on the same port and database. */
  startServer(): Promise<void>;
  /** Kills the server with SIGKILL mid-work and starts it again on the same port and database. */
  crashAndRestart(): Promise<void>;
  /**
   * Starts another production server on the same database and environment, as
   * a scaled-out deployment runs several (PostgreSQL only: the embedded database
   * is open in one process at a time). stopServer() and stop() stop it too.
   */
  startAnotherInstance(): Promise<AppInstance>;
  /** Stops the server and removes its database. */
  stop(): Promise<void>;
};

export type Seed = { tenantA: Tenant; tenantB: Tenant; revokedKey: string };
export type AppServer = RunningApp & Seed;

export type AppServerOptions = {
  stallThresholdSeconds?: number;
  env?: Record<string, string>;
  /**
   * PostgreSQL only: the URL the server is given for the database it was
   * seeded on (migrated and seeded directly), e.g. a pooler in front of it.
   */
  serveThrough?: (databaseUrl: string) => Promise<string>;
  /**
   * PostgreSQL only: the empty database to migrate, seed and serve instead of
   * a fresh one in the test cluster (a replicated pair's, a server the test stops).
   */
  databaseUrl?: string;
};

async function seedTenant(handle: DatabaseHandle, name: string): Promise<Tenant> {
  const email = `${name.toLowerCase()}@example.com`;
  const researcherEmail = `${name.toLowerCase()}-researcher@example.com`;
  const user = await createUser(handle.db, {
    email,
    password: SEED_PASSWORD,
    role: "admin",
    tenant: name,
    name: `${name} Admin`,
  });
  await createUser(handle.db, {
    email: researcherEmail,
    password: SEED_PASSWORD,
    role: "researcher",
    tenant: name,
    name: `${name} Researcher`,
  });
  const key = await createApiKey(handle.db, { email, name: `${name} agent` });
  return {
    tenantId: user.tenantId,
    userId: user.userId,
    email,
    researcherEmail,
    key: key.key,
    apiKeyId: key.apiKeyId,
  };
}

/** The production build on a database seeded with two tenants (an admin, a researcher and an API key each). */
export async function startAppServer(
  backend: Backend,
  options: AppServerOptions = {},
): Promise<AppServer> {
  let seed: Seed | undefined;
  const app = await launch(backend, options, async (handle) => {
    const tenantA = await seedTenant(handle, "Alpha");
    const tenantB = await seedTenant(handle, "Beta");
    const revoked = await createApiKey(handle.db, { email: tenantA.email, name: "revoked" });
    await handle.db
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(eq(apiKeys.id, revoked.apiKeyId));
    seed = { tenantA, tenantB, revokedKey: revoked.key };
  });
  if (!seed) throw new Error("seeding did not run");
  return { ...app, ...seed };
}

/** The production build on an empty, migrated database: a fresh install. */
export function startFreshAppServer(backend: Backend, options: AppServerOptions = {}) {
  return launch(backend, options, async () => {});
}

async function launch(
  backend: Backend,
  options: AppServerOptions,
  seedWith: (handle: DatabaseHandle) => Promise<void>,
): Promise<RunningApp> {
  if (!existsSync(".next/BUILD_ID")) {
    throw new Error("No production build: run `npm run build` before the integration tests.");
  }
  const folder = mkdtempSync(join(tmpdir(), "cairn-app-"));
  const dataDir = join(folder, "pglite");
  const databaseUrl =
    backend === "postgres" ? (options.databaseUrl ?? (await createPostgresDatabase())) : "";
  const open = () =>
    backend === "postgres"
      ? openDatabase({ kind: "postgres", url: databaseUrl, maxConnections: 4 })
      : openDatabase({ kind: "pglite", dataDir });

  const seed = await open();
  try {
    await seed.migrate();
    await seedWith(seed);
  } finally {
    await seed.close();
  }

  const env = {
    DATABASE_URL:
      options.serveThrough && backend === "postgres"
        ? await options.serveThrough(databaseUrl)
        : databaseUrl,
    CAIRN_DATA_DIR: dataDir,
    CAIRN_STALL_THRESHOLD_SECONDS: String(options.stallThresholdSeconds ?? 1800),
    AUTH_SECRET: "test-secret-test-secret-test-secret-1234",
    ...options.env,
  };
  let server = await startNextProcess(env);
  const { url, port } = server;
  const others: NextProcess[] = [];
  const stopServer = async () => {
    await Promise.all([server.stop(), ...others.map((other) => other.stop())]);
  };

  return {
    backend,
    dataDir,
    url,
    mcpUrl: `${url}/api/mcp`,
    port,
    async openDatabase() {
      if (backend === "pglite" && !server.stopped) {
        throw new Error("Stop the server before opening its embedded database.");
      }
      return open();
    },
    serverOutput: () => server.output(),
    stopServer,
    async startServer() {
      server = await startNextProcess(env, port);
    },
    async startAnotherInstance() {
      if (backend !== "postgres") {
        throw new Error("Only a PostgreSQL database can be shared by several servers.");
      }
      const other = await startNextProcess(env);
      others.push(other);
      return {
        url: other.url,
        mcpUrl: `${other.url}/api/mcp`,
        port: other.port,
        stop: () => other.stop(),
      };
    },
    async crashAndRestart() {
      await server.kill();
      server = await startNextProcess(env, port);
    },
    async stop() {
      await stopServer();
      rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
    },
  };
}
