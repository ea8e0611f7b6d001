import { describe, expect, it } from "vitest";
import { cpuTicks, startHostClock, stealBetween } from "./host";

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
