/**
 * How much of the machine the benchmark had while a run was timed: the CPU
 * time the hypervisor gave to other guests (steal) as a share of all the
 * machine's CPU time in that run, from /proc/stat's first line. On a shared
 * virtual machine a neighbour's burst takes whole cores away for seconds: one
 * 10 s window during a run measured 19% steal where the windows around it
 * measured under 1% (docs/performance.md, "How quiet the machine was"). Steal
 * misses a neighbour on the same storage, so the disks' mean write and flush
 * times over the run are read too (`/sys/block`). Issue 41's bars ask for a
 * quiet machine; this says which runs had one, so a ratio's two figures can be
 * judged by more than their own rates.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Over one timed run: the share of all CPU time the host took, in percent,
 * and the disks' mean time per write and per flush completed, in ms (left out
 * when none completed), since a neighbour on the same storage slows each
 * commit's flush without taking any CPU.
 */
export type HostShare = { stealPercent: number; diskWriteMs?: number; diskFlushMs?: number };

/** Counters of the machine's whole disks (`/sys/block/<disk>/stat`), summed. */
export type DiskTicks = { writes: number; writeMs: number; flushes: number; flushMs: number };

/**
 * One disk's `stat` line (block/stat.rst): writes completed and ms spent
 * writing are the 5th and 8th fields, flushes completed and ms spent flushing
 * the 16th and 17th (absent before Linux 5.5, counted as none).
 */
export function diskTicks(line: string): DiskTicks | undefined {
  const fields = line.trim().split(/\s+/).map(Number);
  if (fields.length < 11 || fields.some((f) => !Number.isInteger(f))) return undefined;
  const at = (index: number) => fields[index] ?? 0;
  return { writes: at(4), writeMs: at(7), flushes: at(15), flushMs: at(16) };
}

function readDisks(): DiskTicks | undefined {
  try {
    // Whole disks only: loop devices and RAM disks hold no database.
    const disks = readdirSync("/sys/block").filter((name) => !/^(loop|ram|zram)/.test(name));
    const all = disks.map((name) => diskTicks(readFileSync(`/sys/block/${name}/stat`, "utf8")));
    return all.reduce<DiskTicks | undefined>(
      (sum, disk) =>
        sum && disk
          ? {
              writes: sum.writes + disk.writes,
              writeMs: sum.writeMs + disk.writeMs,
              flushes: sum.flushes + disk.flushes,
              flushMs: sum.flushMs + disk.flushMs,
            }
          : undefined,
      { writes: 0, writeMs: 0, flushes: 0, flushMs: 0 },
    );
  } catch {
    return undefined;
  }
}

/** The mean ms per write and per flush completed between two readings of the disks. */
export function diskBetween(
  before: DiskTicks,
  after: DiskTicks,
): Pick<HostShare, "diskWriteMs" | "diskFlushMs"> {
  const mean = (ms: number, count: number) =>
    count > 0 ? { value: Math.round((ms * 1000) / count) / 1000 } : undefined;
  const write = mean(after.writeMs - before.writeMs, after.writes - before.writes);
  const flush = mean(after.flushMs - before.flushMs, after.flushes - before.flushes);
  return {
    ...(write && { diskWriteMs: write.value }),
    ...(flush && { diskFlushMs: flush.value }),
  };
}

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
 * Starts a clock on the host's CPU and disk counters; calling what it answers
 * ends the timed run and gives the steal and the disks' times over it, or
 * undefined where /proc/stat cannot be read (not Linux): left out, not guessed.
 */
export function startHostClock(): () => HostShare | undefined {
  const before = readTicks();
  const disksBefore = readDisks();
  return () => {
    const after = readTicks();
    const disksAfter = readDisks();
    const share = before && after ? stealBetween(before, after) : undefined;
    if (!share || !disksBefore || !disksAfter) return share;
    return { ...share, ...diskBetween(disksBefore, disksAfter) };
  };
}
