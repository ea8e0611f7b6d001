/** Snapshots and events the engine's loop tests decide on (lib/plan-engine/*.test.ts). */
import type { LoopCondition, PlanSnapshot } from "@/lib/plan-engine/plan-snapshot";
import type { ReviewDecision, StepStatus } from "@/lib/plan-engine/states";

export const plan = (statuses: StepStatus[], over: Partial<PlanSnapshot> = {}): PlanSnapshot => ({
  id: "p",
  status: "executing",
  awaitingSteps: null,
  steps: statuses.map((status, i) => ({
    id: `s${i + 1}`,
    stepOrder: i + 1,
    status,
    stepType: "search" as const,
  })),
  pendingReviews: [],
  ...over,
});

export const cond = (
  id: string,
  conditionExpression: string,
  ifTrueAction: string,
  actionParams: Record<string, unknown> = {},
): LoopCondition => ({ id, conditionExpression, ifTrueAction, actionParams });

export const submitOf = (stepId: string, result: Record<string, unknown> = {}) => ({
  stepId,
  result,
  resultSummary: null,
  confidence: 0.9,
});

export const reviewed = (id: string, order: number) => ({
  id,
  stepOrder: order,
  status: "awaiting_input" as const,
  instructions: "Do it.",
});

/** A person's decision through the web UI on review r1, with the agent's proposal if any. */
export const reviewEvent = (
  decision: ReviewDecision,
  feedback: string | null = null,
  proposal: { result: Record<string, unknown> | null; confidence: number | null } = {
    result: null,
    confidence: null,
  },
) => ({
  reviewRequestId: "r1",
  decision,
  feedback,
  proposal,
  enteredResult: null as Record<string, unknown> | null,
  channel: "web" as const,
  reviewDigest: "d".repeat(64),
  decisionPolicy: "people_only" as const,
});
