/**
 * The production build (`next start`) on a free port against the benchmark's
 * database, in its own process group so that stopping it ends every process it
 * started. Its memory is read from /proc: the resident set of the server and
 * all its descendants.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { freePort } from "@/tests/support/postgres-server";
import { sleep } from "./stats";

export type NextServer = {
  url: string;
  mcpUrl: string;
  /** Resident memory of the server's process tree now, in MB. */
  rssMb(): number;
  stop(): Promise<void>;
};

function parentOf(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces; the fields after its ")" are fixed.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

function rssKb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

export function treeRssMb(root: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const parent = parentOf(pid);
    if (parent === undefined) continue;
    children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  let total = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    total += rssKb(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return total / 1024;
}

async function waitUntilReady(url: string, child: ChildProcess, log: () => string) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`next start exited early:\n${log()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`next start did not become ready:\n${log()}`);
}

export async function startNextServer(databaseUrl: string): Promise<NextServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    process.execPath,
    ["node_modules/next/dist/bin/next", "start", "-H", "127.0.0.1", "-p", String(port)],
    {
      env: {
        ...process.env,
        NODE_ENV: "production",
        DATABASE_URL: databaseUrl,
        NEXT_TELEMETRY_DISABLED: "1",
        AUTH_SECRET: "benchmark-secret-benchmark-secret-0123456789",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  let log = "";
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  try {
    await waitUntilReady(url, child, () => log);
  } catch (error) {
    if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    throw error;
  }
  const pid = child.pid as number;
  return {
    url,
    mcpUrl: `${url}/api/mcp`,
    rssMb: () => treeRssMb(pid),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-pid, "SIGTERM");
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) process.kill(-pid, "SIGKILL");
    },
  };
}
