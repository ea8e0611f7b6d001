/**
 * A throwaway PostgreSQL 15 cluster for tests and the benchmark: a temporary
 * folder, a free port on 127.0.0.1, removed on stop. `initdb` refuses to run as
 * root, so as root the cluster belongs to the `postgres` system user.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PG_BIN = process.env.CAIRN_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export type PostgresServer = {
  url: string;
  port: number;
  /** Stops the server at once and removes its folder. */
  stop(): void;
  /**
   * Stops the server as a crash would (immediate shutdown: its processes are
   * killed, no checkpoint; WAL still in its buffers is lost, WAL written to the
   * OS survives) and starts it again on the same folder and port, so it
   * recovers from its WAL (tests/db-crash.test.ts). A process stopped with
   * SIGSTOP is killed by the postmaster after 5 s, so that stop takes 5 s.
   */
  crashAndRestart(): void;
  /** Stops the server as crashAndRestart does, keeping its folder: it is down until start(). */
  crash(): void;
  /** Starts the server again after crash(), on the same folder and port. */
  start(): void;
};

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

function postgresUid(): { uid: number; gid: number } {
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  return { uid, gid };
}

/** Runs a PostgreSQL program, as the `postgres` system user when root (initdb refuses root). */
export function runAsPostgres(command: string, args: string[]): string {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot
    ? ["runuser", ["-u", "postgres", "--", command, ...args]]
    : [command, args];
  const result = spawnSync(file, argv, { encoding: "utf8" });
  if (result.status !== 0) {
    throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/** A temporary folder for a cluster, owned by whoever runs its programs. */
export function clusterRoot(): string {
  const initdb = join(PG_BIN, "initdb");
  if (!existsSync(initdb)) {
    throw new Error(
      `PostgreSQL 15 is not installed (${initdb} is missing). Install it with "apt-get install -y postgresql-15" or set CAIRN_PG_BIN to its bin folder.`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), "cairn-pg-"));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresUid();
    chmodSync(root, 0o755);
    chownSync(root, uid, gid);
  }
  return root;
}

/** `pg_ctl start`'s server options: a port on 127.0.0.1, its socket in `root`, more `-c` settings. */
export function serverOptions(port: number, root: string, settings: string[] = []): string {
  return [
    `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=200`,
    ...settings.map((setting) => `-c ${setting}`),
  ].join(" ");
}

/** A new cluster in `dataDir`, its superuser `cairn` trusted (tests only). */
export function initCluster(dataDir: string): void {
  runAsPostgres(join(PG_BIN, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "cairn",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-instructions",
  ]);
}

/** Starts the cluster in `dataDir` on `port`, its log and socket under `root`; waits until it serves. */
export function startCluster(dataDir: string, root: string, port: number, settings: string[] = []) {
  runAsPostgres(join(PG_BIN, "pg_ctl"), [
    "-D",
    dataDir,
    "-l",
    join(root, "server.log"),
    "-o",
    serverOptions(port, root, settings),
    "-w",
    "start",
  ]);
}

/** Stops the cluster in `dataDir` at once, as a crash would (no checkpoint). */
export function stopCluster(dataDir: string) {
  runAsPostgres(join(PG_BIN, "pg_ctl"), ["-D", dataDir, "-m", "immediate", "-w", "stop"]);
}

/**
 * `settings`: more `-c name=value` server settings (the benchmark loads
 * pg_stat_statements with planning tracked, to report where the time goes).
 */
export async function startPostgres(settings: string[] = []): Promise<PostgresServer> {
  const root = clusterRoot();
  const dataDir = join(root, "data");
  const port = await freePort();
  initCluster(dataDir);
  const start = () => startCluster(dataDir, root, port, settings);
  const stopNow = () => stopCluster(dataDir);
  start();
  return {
    url: `postgres://cairn@127.0.0.1:${port}/postgres`,
    port,
    stop() {
      try {
        stopNow();
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    crashAndRestart() {
      stopNow();
      start();
    },
    crash: stopNow,
    start,
  };
}
