/**
 * A throwaway PgBouncer (Debian's, 1.18 on bookworm) in front of a test
 * PostgreSQL server, as a serverless host or a managed database puts one in
 * front of Cairn: a temporary folder, a free port on 127.0.0.1, stopped and
 * removed on stop. PgBouncer refuses to run as root, so as root it runs as the
 * `postgres` system user, like the test clusters (postgres-server.ts).
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./postgres-server";

export const PGBOUNCER = process.env.CAIRN_PGBOUNCER ?? "/usr/sbin/pgbouncer";

export type PgBouncer = {
  /** `serverUrl` with PgBouncer's address in place of the server's. */
  url: string;
  stop(): Promise<void>;
};

export type PgBouncerOptions = {
  /** The server's URL (postgres://user@127.0.0.1:port/database). */
  serverUrl: string;
  poolMode: "transaction" | "session";
  /** Server connections per database and user: fewer than the clients', so they are shared. */
  poolSize: number;
};

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER)) {
    throw new Error(
      `PgBouncer is not installed (${PGBOUNCER} is missing). Install it with "apt-get install -y pgbouncer" or set CAIRN_PGBOUNCER to it.`,
    );
  }
  const server = new URL(options.serverUrl);
  const root = mkdtempSync(join(tmpdir(), "cairn-pgbouncer-"));
  chmodSync(root, 0o777);
  const port = await freePort();
  const config = join(root, "pgbouncer.ini");
  writeFileSync(
    config,
    [
      "[databases]",
      `* = host=${server.hostname} port=${server.port} user=${server.username}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      // `any`: no password, every client logs in as the server user above.
      "auth_type = any",
      `pool_mode = ${options.poolMode}`,
      `default_pool_size = ${options.poolSize}`,
      "max_client_conn = 1000",
      `logfile = ${join(root, "pgbouncer.log")}`,
    ].join("\n"),
  );
  chmodSync(config, 0o644);
  const command = process.getuid?.() === 0 ? "runuser" : PGBOUNCER;
  const args = process.getuid?.() === 0 ? ["-u", "postgres", "--", PGBOUNCER, config] : [config];
  const child = spawn(command, args, { stdio: "ignore", detached: true });
  let exited: number | null = null;
  child.once("exit", (code) => {
    exited = code ?? -1;
  });
  const deadline = Date.now() + 10_000;
  while (!(await listening(port))) {
    if (exited !== null || Date.now() > deadline) {
      if (child.pid && exited === null) process.kill(-child.pid, "SIGKILL");
      rmSync(root, { recursive: true, force: true });
      throw new Error(`PgBouncer did not start (exit code ${exited}); see its log in ${root}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  server.host = `127.0.0.1:${port}`;
  return {
    url: server.toString(),
    async stop() {
      if (child.pid && exited === null) {
        const gone = new Promise((resolve) => child.once("exit", resolve));
        process.kill(-child.pid, "SIGTERM");
        await gone;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
