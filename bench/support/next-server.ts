/**
 * The production server (build/server.cjs, tests/support/next-process.ts) on a free port against the benchmark's
 * database, in its own process group so that stopping it ends every process it
 * started. Its memory and CPU time are read from /proc: the resident set, and the
 * user + system time, of the server and all its descendants.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { startNextProcess } from "@/tests/support/next-process";

export type NextServer = {
  url: string;
  mcpUrl: string;
  /** Resident memory of the server's process tree now, in MB. */
  rssMb(): number;
  /** User + system CPU time the server's process tree has used so far, in ms. */
  cpuMs(): number;
  stop(): Promise<void>;
};

/** The fields of /proc/<pid>/stat after the command name, from field 3 (state) on. */
function statFields(pid: number): string[] | undefined {
  try {
    // The command name (field 2) may hold spaces; the fields after its ")" are fixed.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
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

/** The root and every live descendant of it. */
function treePids(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const parent = statFields(pid)?.[1];
    if (parent === undefined) continue;
    children.set(Number(parent), [...(children.get(Number(parent)) ?? []), pid]);
  }
  const tree: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    tree.push(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function treeRssMb(root: number): number {
  return treePids(root).reduce((total, pid) => total + rssKb(pid), 0) / 1024;
}

let ticksPerSecond: number | undefined;

/**
 * utime + stime of each process (all its threads, the garbage collector's
 * included) and cutime + cstime, the time of children it has already reaped,
 * so a short-lived child's CPU is not lost when it exits; /proc counts in clock ticks.
 */
function treeCpuMs(root: number): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));
  let ticks = 0;
  for (const pid of treePids(root)) {
    const fields = statFields(pid);
    // Fields 14-17 of stat(5), counted here from field 3.
    if (fields) for (const index of [11, 12, 13, 14]) ticks += Number(fields[index]);
  }
  return (ticks * 1000) / ticksPerSecond;
}

export async function startNextServer(databaseUrl: string): Promise<NextServer> {
  const server = await startNextProcess({
    DATABASE_URL: databaseUrl,
    AUTH_SECRET: "benchmark-secret-benchmark-secret-0123456789",
  });
  return {
    url: server.url,
    mcpUrl: `${server.url}/api/mcp`,
    rssMb: () => treeRssMb(server.pid),
    cpuMs: () => treeCpuMs(server.pid),
    stop: () => server.stop(),
  };
}
