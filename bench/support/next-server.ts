/**
 * The production build (`next start`) on a free port against the benchmark's
 * database, in its own process group so that stopping it ends every process it
 * started. Its memory is read from /proc: the resident set of the server and
 * all its descendants.
 */
import { readdirSync, readFileSync } from "node:fs";
import { startNextProcess } from "@/tests/support/next-process";

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

export async function startNextServer(databaseUrl: string): Promise<NextServer> {
  const server = await startNextProcess({
    DATABASE_URL: databaseUrl,
    AUTH_SECRET: "benchmark-secret-benchmark-secret-0123456789",
  });
  return {
    url: server.url,
    mcpUrl: `${server.url}/api/mcp`,
    rssMb: () => treeRssMb(server.pid),
    stop: () => server.stop(),
  };
}
