/**
 * What a simulated agent sends: a plan of ordinary steps with one branching
 * condition, and a ~2 KB structured result per step (the size of a typical
 * search step's findings). No checkpoint steps: the loop must not wait for a person.
 */
import type { CreatePlanInput } from "@/lib/services/plans/create-plan";

const STEP_TYPES = ["search", "extract", "analyze", "critique", "synthesize"] as const;

export function planInput(name: string, stepCount: number): CreatePlanInput {
  return {
    name,
    researchQuestion: "How fast does Cairn run research plans?",
    steps: Array.from({ length: stepCount }, (_, i) => ({
      stepType: STEP_TYPES[i % STEP_TYPES.length] as (typeof STEP_TYPES)[number],
      instructions: `Step ${i + 1}: find and weigh the sources on aspect ${i + 1} of the question.`,
    })),
    // Evaluated on every plan and true for every result below, so the fired
    // path (verdicts written, action taken) is measured, but `continue` changes
    // nothing, and every step still runs.
    branchingConditions: [
      {
        afterStepOrder: Math.min(3, stepCount),
        conditionExpression: "result.sourceCount >= 5",
        ifTrueAction: "continue",
      },
    ],
    planDesignRationale: "Benchmark plan.",
    sessionId: "bench",
  };
}

const FINDING =
  "A primary source with a dated measurement, cross-checked against a second independent report; ";

/** A result of about 2 KB once serialised. */
export function stepResult(stepOrder: number): Record<string, unknown> {
  return {
    sourceCount: 7,
    stepOrder,
    findings: Array.from({ length: 20 }, (_, i) => `${i + 1}. ${FINDING}`),
  };
}

export const executionReport = {
  thinking: "Searched, read the three best sources, kept the two that agree.",
  webSearches: [{ query: "benchmark query", results: 10, used: 2 }],
  webFetches: [],
  otherToolCalls: [],
  subagents: [],
};

export function submitInput(planId: string, stepId: string, stepOrder: number) {
  return {
    planId,
    stepId,
    result: stepResult(stepOrder),
    resultSummary: "Two sources agree on the figure.",
    confidence: 0.9,
    stepExecutionReport: executionReport,
  };
}
