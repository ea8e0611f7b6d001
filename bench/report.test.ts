import { describe, expect, it } from "vitest";
import { coreOverPeer } from "./report";

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
