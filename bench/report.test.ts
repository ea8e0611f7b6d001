import { describe, expect, it } from "vitest";
import { coreOverPeer, quietLines } from "./report";

const pair = (core: number, peer: number) => ({
  core: { stepsPerSecond: core },
  peer: { stepsPerSecond: peer },
});

describe("coreOverPeer", () => {
  it("gives one pair's ratio and its figures", () => {
    expect(coreOverPeer([pair(399.9, 333.9)])).toEqual({
      value: 1.2,
      detail: "399.9 ÷ 333.9",
    });
  });

  it("takes the median of each pair's own ratio, not the ratio of the medians", () => {
    // Ratios 1, 2 and 1.25: their median is 1.25; the median core (150) over
    // the median pg-boss run (100) would say 1.5.
    expect(coreOverPeer([pair(100, 100), pair(200, 100), pair(150, 120)])).toEqual({
      value: 1.25,
      detail: "median of 3 pairs in a row: 100 ÷ 100, 200 ÷ 100, 150 ÷ 120",
    });
  });

  it("is not moved by one disturbed pair", () => {
    expect(coreOverPeer([pair(500, 400), pair(200, 400), pair(510, 400)]).value).toBe(1.25);
  });
});

describe("quietLines", () => {
  it("says nothing when the host's steal was not read", () => {
    expect(quietLines([])).toEqual([]);
  });

  it("gives the median and the highest steal, and no noisy run on a quiet machine", () => {
    const text = quietLines([
      { label: "pg-boss, 8 workers", stealPercent: 0.4 },
      { label: "core, own plans, 8 agents", stealPercent: 1.2 },
      { label: "MCP 2025-11-25, 8 agents", stealPercent: 0.2 },
    ]).join("\n");
    expect(text).toContain("median 0.4%, highest 1.2% (core, own plans, 8 agents)");
    expect(text).toContain("No run had 5% or more.");
    expect(text).toContain("The disks' times were not read.");
  });

  it("names every run the host moved", () => {
    const text = quietLines([
      { label: "pg-boss, 8 workers, pair 2", stealPercent: 18.9 },
      { label: "core, own plans, 8 agents, pair 2", stealPercent: 5 },
      { label: "core, own plans, 32 agents", stealPercent: 0.3, diskWriteMs: 0.41 },
    ]).join("\n");
    expect(text).toContain("highest 18.9% (pg-boss, 8 workers, pair 2)");
    expect(text).toContain(
      "whose rates the host moved: pg-boss, 8 workers, pair 2 18.9%; core, own plans, 8 agents, pair 2 5%.",
    );
    expect(text).toContain("per write completed in a run was 0.41 ms, per flush not read");
  });
});
