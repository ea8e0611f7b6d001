/**
 * A PostgreSQL 15 primary with a synchronous standby, as a high-availability
 * deployment runs them: the standby built by `pg_basebackup -R` (which copies
 * the primary's `synchronous_standby_names`, as set by ALTER SYSTEM, into it),
 * both on 127.0.0.1. `failPrimary` kills the primary's postmaster with SIGKILL
 * (a lost host); `promote` promotes the standby and clears the synchronous
 * names on it, as a failover manager (Patroni, pg_auto_failover) does, since no
 * standby is left to wait for.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import {
  clusterRoot,
  freePort,
  initCluster,
  PG_BIN,
  runAsPostgres,
  startCluster,
  stopCluster,
} from "./postgres-server";

export type ReplicatedPostgres = {
  /** Both hosts, the primary first, for `database` (created on the primary before the standby was built). */
  url(database: string, targetSessionAttrs: string): string;
  /** The standby alone. */
  standbyUrl(database: string): string;
  /**
   * Waits until the standby has replayed all the primary has written: a
   * synchronous commit waits for the standby's flush, not for its replay.
   */
  standbyCaughtUp(): Promise<void>;
  failPrimary(): void;
  promote(): Promise<void>;
  stop(): void;
};

const STANDBY_NAME = "cairn_standby";

export async function startReplicatedPostgres(database: string): Promise<ReplicatedPostgres> {
  const pgCtl = join(PG_BIN, "pg_ctl");
  const primaryRoot = clusterRoot();
  const standbyRoot = clusterRoot();
  const primaryData = join(primaryRoot, "data");
  const standbyData = join(standbyRoot, "data");
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  let primaryRunning = false;
  let standbyRunning = false;
  const stop = () => {
    try {
      if (standbyRunning) stopCluster(standbyData);
      if (primaryRunning) stopCluster(primaryData);
    } finally {
      rmSync(primaryRoot, { recursive: true, force: true });
      rmSync(standbyRoot, { recursive: true, force: true });
    }
  };

  try {
    initCluster(primaryData);
    startCluster(primaryData, primaryRoot, primaryPort);
    primaryRunning = true;
    const admin = postgres(`postgres://cairn@127.0.0.1:${primaryPort}/postgres`, {
      max: 1,
      onnotice: () => {},
    });
    try {
      await admin.unsafe(`create database ${database}`);
      await admin.unsafe(`alter system set synchronous_standby_names = '${STANDBY_NAME}'`);
      await admin.unsafe("select pg_reload_conf()");
    } finally {
      await admin.end();
    }
    runAsPostgres(join(PG_BIN, "pg_basebackup"), [
      "-h",
      "127.0.0.1",
      "-p",
      String(primaryPort),
      "-U",
      "cairn",
      "-D",
      standbyData,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
    ]);
    // The standby's walreceiver names itself by cluster_name.
    startCluster(standbyData, standbyRoot, standbyPort, [`cluster_name=${STANDBY_NAME}`]);
    standbyRunning = true;
    await waitForSyncStandby(primaryPort);
  } catch (error) {
    stop();
    throw error;
  }

  return {
    url: (name, targetSessionAttrs) =>
      `postgres://cairn@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/${name}?target_session_attrs=${targetSessionAttrs}`,
    standbyUrl: (name) => `postgres://cairn@127.0.0.1:${standbyPort}/${name}`,
    async standbyCaughtUp() {
      const connect = (port: number) =>
        postgres(`postgres://cairn@127.0.0.1:${port}/postgres`, { max: 1, onnotice: () => {} });
      const primary = connect(primaryPort);
      const standby = connect(standbyPort);
      try {
        const [written] = await primary`select pg_current_wal_lsn()::text as lsn`;
        for (let tries = 0; tries < 200; tries += 1) {
          const [replayed] = await standby`
            select pg_last_wal_replay_lsn() >= ${written?.lsn}::pg_lsn as done`;
          if (replayed?.done) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error("The standby did not replay the primary's WAL within 10 seconds.");
      } finally {
        await Promise.all([primary.end(), standby.end()]);
      }
    },
    failPrimary() {
      const pid = Number(readFileSync(join(primaryData, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGKILL");
      primaryRunning = false;
    },
    async promote() {
      runAsPostgres(pgCtl, ["-D", standbyData, "-w", "promote"]);
      const admin = postgres(`postgres://cairn@127.0.0.1:${standbyPort}/postgres`, {
        max: 1,
        onnotice: () => {},
      });
      try {
        await admin.unsafe("alter system reset synchronous_standby_names");
        await admin.unsafe("select pg_reload_conf()");
      } finally {
        await admin.end();
      }
    },
    stop,
  };
}

async function waitForSyncStandby(primaryPort: number) {
  const admin = postgres(`postgres://cairn@127.0.0.1:${primaryPort}/postgres`, {
    max: 1,
    onnotice: () => {},
  });
  try {
    for (let tries = 0; tries < 200; tries += 1) {
      const rows = await admin.unsafe<{ sync_state: string }[]>(
        "select sync_state from pg_stat_replication",
      );
      if (rows[0]?.sync_state === "sync") return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("The standby did not become synchronous within 10 seconds.");
  } finally {
    await admin.end();
  }
}
