/**
 * How much of the machine the benchmark had while a run was timed: the CPU
 * time the hypervisor gave to other guests (steal) as a share of all the
 * machine's CPU time in that run, from /proc/stat's first line. On a shared
 * virtual machine a neighbour's burst takes whole cores away for seconds: one
 * 10 s window during a run measured 19% steal where the windows around it
 * measured under 1% (docs/performance.md, "How quiet the machine was"). Issue
 * 41's bars ask for a quiet machine; this says which runs had one, so a
 * ratio's two figures can be judged by more than their own rates.
 */
import { readFileSync } from "node:fs";

/** The share of all CPU time the host took, in percent, over one timed run. */
export type HostShare = { stealPercent: number };

type CpuTicks = { total: number; steal: number };

/**
 * /proc/stat's aggregate line (`cpu user nice system idle iowait irq softirq
 * steal ...`): all eight counters' sum and steal; undefined for any other text.
 */
export function cpuTicks(line: string): CpuTicks | undefined {
  const [name, ...rest] = line.trim().split(/\s+/);
  const fields = rest.slice(0, 8).map(Number);
  if (name !== "cpu" || fields.length < 8 || fields.some((f) => !Number.isInteger(f))) {
    return undefined;
  }
  return { total: fields.reduce((sum, ticks) => sum + ticks, 0), steal: fields[7] as number };
}

/** The steal between two readings, to a tenth of a percent; undefined if no time passed. */
export function stealBetween(before: CpuTicks, after: CpuTicks): HostShare | undefined {
  const total = after.total - before.total;
  if (total <= 0) return undefined;
  return { stealPercent: Math.round(((after.steal - before.steal) * 1000) / total) / 10 };
}

function readTicks(): CpuTicks | undefined {
  try {
    return cpuTicks(readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "");
  } catch {
    return undefined;
  }
}

/**
 * Starts a clock on the host's CPU counters; calling what it answers ends the
 * timed run and gives the steal over it, or undefined where /proc/stat cannot
 * be read (not Linux): left out, not guessed.
 */
export function startHostClock(): () => HostShare | undefined {
  const before = readTicks();
  return () => {
    const after = readTicks();
    return before && after ? stealBetween(before, after) : undefined;
  };
}
