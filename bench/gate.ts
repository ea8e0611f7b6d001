/**
 * The regression gate (`npm run bench:gate`, run by .ci/run): the quick mode's
 * ratios against a committed baseline taken by the same mode. A ratio more than 15% worse, in its own direction, fails.
 * Ratios only: absolute times move with the machine. docs/performance.md says
 * how the baseline is refreshed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Better, Ratio } from "./report";
import { round } from "./support/stats";

export const GATE_BASELINE = join("bench", "results", "gate-baseline.json");
export const GATE_TOLERANCE = 0.15;

/**
 * Ratios the bench reports that the gate prints but does not hold, with what
 * they measured on the same code on this 2-core machine under other work. Each
 * moved by more than the tolerance, so it would fail unchanged code
 * (docs/performance.md). The throughput ratios: the range of nine 2-second
 * runs, then the range of the median of three such runs (and its spread).
 */
export const NOT_GATED: Readonly<Record<string, string>> = {
  "core ÷ pg-boss steps/s, 1 agent(s)": "0.75-1.32; 0.87-0.99, 13%",
  "2 × core steps/s ÷ floor UPDATE tx/s, 1 client(s)": "0.24-0.67; 0.28-0.43, 37%",
  "core ÷ pg-boss steps/s, 8 agent(s)": "0.48-0.94; 0.58-0.78, 33%",
  "2 × core steps/s ÷ floor UPDATE tx/s, 8 client(s)": "0.12-0.24; 0.15-0.19, 21%",
  "core ÷ pg-boss steps/s, 32 agent(s)": "0.41-0.70; 0.46-0.57, 21%",
  "2 × core steps/s ÷ floor UPDATE tx/s, 32 client(s)": "0.07-0.15; 0.09-0.12, 30%",
  "MCP ÷ core steps/s, 8 agents": "0.10-0.29; 0.11-0.17, 40%",
  "MCP tool calls/s ÷ ping calls/s, 8 agents": "0.49-1.13; 0.51-0.72, 31%",
  "shared-plan ÷ own-plan steps/s, 8 agents": "0.18-0.36; 0.18-0.25, 33%",
  "get_plan_status p50 at 10000 ÷ at 100 plans": "0.96-1.24 over five gate runs, 26%",
  "server CPU per MCP loop call ÷ in-process CPU per loop call":
    "4.77-6.13 over seven runs at load average 4-18, 25%",
};

export type GateBaseline = {
  date: string;
  ratios: { name: string; value: number; better: Better }[];
};

export type GateRow = {
  name: string;
  better: Better;
  baseline: number;
  /** null: the run has no ratio of this name (renamed or gone: refresh the baseline). */
  measured: number | null;
  /** How much worse, as a fraction of the baseline; negative when better. */
  worse: number | null;
  pass: boolean;
};

export function compareWithBaseline(baseline: GateBaseline, ratios: readonly Ratio[]): GateRow[] {
  return baseline.ratios.map(({ name, value, better }) => {
    const measured = ratios.find((ratio) => ratio.name === name)?.value ?? null;
    if (measured === null)
      return { name, better, baseline: value, measured, worse: null, pass: false };
    const change = (measured - value) / value;
    const worse = round(better === "higher" ? -change : change, 3);
    return { name, better, baseline: value, measured, worse, pass: worse <= GATE_TOLERANCE };
  });
}

/** The gated ratios against the baseline, then the ones left out, for the record. */
export function gateTable(rows: readonly GateRow[], ratios: readonly Ratio[]): string {
  const gated = rows.map((row) => {
    const worse = row.worse === null ? "missing" : `${round(row.worse * 100, 1)}%`;
    return `| ${row.name} | ${row.better} | ${row.baseline} | ${row.measured ?? "–"} | ${worse} | ${row.pass ? "PASS" : "**FAIL**"} |`;
  });
  const left = ratios
    .filter((ratio) => ratio.name in NOT_GATED)
    .map((ratio) => `| ${ratio.name} | ${ratio.better} | – | ${ratio.value} | – | not gated |`);
  return [
    "| ratio | better | baseline | measured | worse by | gate |",
    "| --- | --- | --- | --- | --- | --- |",
    ...gated,
    ...left,
  ].join("\n");
}

export function readBaseline(): GateBaseline {
  return JSON.parse(readFileSync(GATE_BASELINE, "utf8")) as GateBaseline;
}

/** The gated ratios of this run become the baseline. */
export function writeBaseline(ratios: readonly Ratio[], date: string): void {
  const baseline: GateBaseline = {
    date,
    ratios: ratios
      .filter((ratio) => !(ratio.name in NOT_GATED))
      .map(({ name, value, better }) => ({ name, value, better })),
  };
  writeFileSync(GATE_BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
}
