/**
 * The set-up the browser tests of reviews share (quorum, escalation chain):
 * an agent's plan handed out up to its checkpoint, and a review asked there.
 */
import type { Agent } from "../../tests/support/mcp-client";

const ONE_CHECKPOINT = [{ stepType: "checkpoint", instructions: "Show it." }];

/** A new plan whose first step, a checkpoint, the agent holds; its steps as created. */
export async function planAtCheckpoint(
  agent: Agent,
  name: string,
  plan: { researchQuestion?: string; steps?: Record<string, unknown>[] } = {},
) {
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: plan.researchQuestion ?? "q",
    steps: plan.steps ?? ONE_CHECKPOINT,
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  return { planId: created.planId, stepId: next.step.stepId, steps: created.steps };
}

/** A plan waiting at its checkpoint for the review asked with `review` ("Please check." unless given). */
export async function awaitingReview(
  agent: Agent,
  name: string,
  review: Record<string, unknown> = {},
  plan: Parameters<typeof planAtCheckpoint>[2] = {},
) {
  const at = await planAtCheckpoint(agent, name, plan);
  const requested = await agent.ok("request_user_review", {
    planId: at.planId,
    stepId: at.stepId,
    summary: "Please check.",
    ...review,
  });
  return { ...at, requested };
}
