import { describe, expect, it } from "vitest";
import { compareWithBaseline, type GateBaseline } from "./gate";
import type { Ratio } from "./report";

const baseline: GateBaseline = {
  date: "2026-11-28",
  ratios: [
    { name: "throughput", value: 1, better: "higher" },
    { name: "cost", value: 2, better: "lower" },
  ],
};

const ratio = (name: string, value: number, better: Ratio["better"]): Ratio => ({
  name,
  value,
  better,
  detail: "",
});

describe("compareWithBaseline", () => {
  it("fails a higher-is-better ratio that fell by more than 15%, and only that one", () => {
    const rows = compareWithBaseline(baseline, [
      ratio("throughput", 0.84, "higher"),
      ratio("cost", 2.2, "lower"),
    ]);
    expect(rows.map((row) => [row.name, row.worse, row.pass])).toEqual([
      ["throughput", 0.16, false],
      ["cost", 0.1, true],
    ]);
  });

  it("fails a lower-is-better ratio that rose by more than 15%", () => {
    const rows = compareWithBaseline(baseline, [
      ratio("throughput", 1.5, "higher"),
      ratio("cost", 2.32, "lower"),
    ]);
    expect(rows.map((row) => [row.name, row.worse, row.pass])).toEqual([
      ["throughput", -0.5, true],
      ["cost", 0.16, false],
    ]);
  });

  it("passes improvements in either direction, however large", () => {
    const rows = compareWithBaseline(baseline, [
      ratio("throughput", 3, "higher"),
      ratio("cost", 0.5, "lower"),
    ]);
    expect(rows.every((row) => row.pass)).toBe(true);
  });

  it("fails a baseline ratio the run no longer reports, so a renamed ratio needs a new baseline", () => {
    const [, cost] = compareWithBaseline(baseline, [ratio("throughput", 1, "higher")]);
    expect(cost).toMatchObject({ name: "cost", measured: null, pass: false });
  });
});
