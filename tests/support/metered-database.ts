/**
 * A fresh, migrated database that counts the bytes it sends the server: what
 * a read costs the server however little of it a page shows. On PostgreSQL
 * the bytes of every connection through a local proxy in front of the test
 * cluster; on PGlite the length of every protocol message it answers with,
 * its client opened as lib/db/client.ts opens it.
 */
import { createServer, type Server, Socket } from "node:net";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import {
  type Database,
  type DatabaseHandle,
  MIGRATIONS_FOLDER,
  openDatabase,
} from "@/lib/db/client";
import { preparingPglite } from "@/lib/db/pglite-prepared";
import * as schema from "@/lib/db/schema";
import { type Backend, createPostgresDatabase } from "./databases";

export type MeteredDatabase = {
  db: Database;
  /** The bytes the database has sent the server so far. */
  bytesSent(): number;
  close(): Promise<void>;
};

/** The bytes `metered` sends the server while `action` runs. */
export async function bytesDuring(
  metered: MeteredDatabase,
  action: () => Promise<unknown>,
): Promise<number> {
  const before = metered.bytesSent();
  await action();
  return metered.bytesSent() - before;
}

async function meteredPglite(): Promise<MeteredDatabase> {
  const client = await PGlite.create(undefined, { extensions: { pg_trgm } });
  let bytes = 0;
  const send = client.execProtocolStream.bind(client);
  client.execProtocolStream = async (...args: Parameters<PGlite["execProtocolStream"]>) => {
    const messages = await send(...args);
    for (const message of messages) bytes += message.length;
    return messages;
  };
  const db = drizzle({ client: preparingPglite(client), schema });
  await migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
  return {
    db: db as unknown as Database,
    bytesSent: () => bytes,
    close: () => client.close(),
  };
}

/** A proxy to `host:port` on a local port, counting the bytes from the server. */
async function countingProxy(host: string, port: number) {
  let bytes = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    upstream.connect(port, host);
    upstream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the proxy has no port");
  return {
    port: address.port,
    bytesSent: () => bytes,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function meteredPostgres(): Promise<MeteredDatabase> {
  const url = new URL(await createPostgresDatabase());
  const proxy = await countingProxy(url.hostname, Number(url.port || 5432));
  url.hostname = "127.0.0.1";
  url.port = String(proxy.port);
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ kind: "postgres", url: url.toString() });
    await handle.migrate();
  } catch (error) {
    await proxy.close();
    throw error;
  }
  return {
    db: handle.db,
    bytesSent: proxy.bytesSent,
    close: async () => {
      await handle.close();
      await proxy.close();
    },
  };
}

export const meteredDatabase = (backend: Backend): Promise<MeteredDatabase> =>
  backend === "pglite" ? meteredPglite() : meteredPostgres();
