import { describe, expect, it } from "vitest";
import { cpuTicks, diskBetween, diskTicks, startHostClock, stealBetween } from "./host";

describe("the host's steal", () => {
  // Two readings of /proc/stat 5 s apart on this machine.
  const before = "cpu  13958 0 4802 37007 432 0 218 233 0 0";
  const after = "cpu  13958 0 4805 38002 432 0 218 237 0 0";

  it("reads the aggregate line's counters", () => {
    expect(cpuTicks(before)).toEqual({ total: 56650, steal: 233 });
    expect(cpuTicks("cpu0 1 2 3 4 5 6 7 8")).toBeUndefined();
    expect(cpuTicks("cpu 1 2 3")).toBeUndefined();
  });

  it("gives the steal between two readings as a share of all CPU time", () => {
    const [a, b] = [cpuTicks(before), cpuTicks(after)];
    if (!a || !b) throw new Error("unreadable");
    // 4 ticks of steal in 1,002.
    expect(stealBetween(a, b)).toEqual({ stealPercent: 0.4 });
    expect(stealBetween(a, a)).toBeUndefined();
  });

  it("reads this machine's counters around a run", async () => {
    const stop = startHostClock();
    // Long enough for /proc/stat's 10 ms ticks to move.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const share = stop();
    expect(share?.stealPercent).toBeGreaterThanOrEqual(0);
    expect(share?.stealPercent).toBeLessThanOrEqual(100);
  });
});

describe("the disks' times", () => {
  // /sys/block/vda/stat on this machine, and the same disk 8 writes and 5 flushes later.
  const before =
    "88303 10050 3639970 30921 892875 59764 47210784 422499 0 82048 475019 26607 27 13434224 4052 282629 17546";
  const after =
    "88303 10050 3639970 30921 892883 59764 47210848 422503 0 82052 475023 26607 27 13434224 4052 282634 17547";

  it("reads the writes and flushes completed and the ms spent on them", () => {
    expect(diskTicks(before)).toEqual({
      writes: 892875,
      writeMs: 422499,
      flushes: 282629,
      flushMs: 17546,
    });
    // A kernel before 5.5 counts no flushes.
    expect(diskTicks("1 2 3 4 5 6 7 8 9 10 11")).toEqual({
      writes: 5,
      writeMs: 8,
      flushes: 0,
      flushMs: 0,
    });
    expect(diskTicks("vda 1 2")).toBeUndefined();
  });

  it("gives the mean time per write and per flush between two readings", () => {
    const [a, b] = [diskTicks(before), diskTicks(after)];
    if (!a || !b) throw new Error("unreadable");
    expect(diskBetween(a, b)).toEqual({ diskWriteMs: 0.5, diskFlushMs: 0.2 });
    // Nothing completed: no mean, not a zero.
    expect(diskBetween(a, a)).toEqual({});
  });
});
