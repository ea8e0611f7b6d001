/**
 * A person can always decide a checkpoint (docs/reviews.md): where the agent
 * cannot meet the step's outputSchema, it puts the checkpoint up with no
 * proposal, and the person approves with a result they enter that the schema
 * accepts, or skips, rejects or sends it back. No hint names a call that is
 * refused. In process on PGlite and PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  signedInAdmin,
  useFreshTenant,
} from "../support/in-process";
import { readRows } from "../support/rows";

/** A contract only the person can meet: their sign-off, with a verdict. */
const SIGN_OFF_SCHEMA = {
  type: "object",
  required: ["verdict", "signedOffBy"],
  properties: {
    verdict: { enum: ["holds", "fails"] },
    signedOffBy: { type: "string", minLength: 1 },
  },
};

describe.each(BACKENDS)("a checkpoint the agent cannot propose for, on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as { person: InProcessAgent; personCtx: ServiceContext };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
  });

  /** Step 1 done, the schema'd checkpoint (step 2) handed out, step 3 waiting behind it. */
  async function atTheCheckpoint() {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Sign-off",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Search." },
        { stepType: "checkpoint", instructions: "Sign off.", outputSchema: SIGN_OFF_SCHEMA },
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    expect(checkpoint.step.stepType).toBe("checkpoint");
    return { planId: planId as string, stepId: checkpoint.step.stepId, hint: checkpoint.hint };
  }

  const stepRow = (stepId: string) =>
    readRows<{ status: string; result: unknown }>(
      tenant.handle.db,
      sql`select status, result from plan_step where id = ${stepId}::uuid`,
    );

  it("takes a review with no proposal, and completes the step with the valid result the person enters", async () => {
    const { planId, stepId, hint } = await atTheCheckpoint();
    // Every call the hints name is one the agent may make.
    expect(hint).toContain("request_user_review");
    expect(hint).toContain("left out, the person enters the result");
    expect(hint).not.toContain("submit_step_result");
    const other = inProcessAgent(tenant.agent.ctx);
    const waiting = await other.ok("get_next_step", { planId });
    expect(waiting.status).toBe("no_pending_steps");
    expect(waiting.hint).toContain("Step 2 in progress is a checkpoint");
    expect(waiting.hint).not.toContain("submit_step_result");

    const badProposal = await tenant.agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "My best guess.",
      proposedResult: { verdict: "holds" },
    });
    expect(badProposal).toMatch(/^VALIDATION_ERROR: proposedResult does not satisfy/);
    expect(badProposal).toContain("or leave proposedResult out");
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "I cannot sign off myself: please do.",
    });
    expect(review.planStatus).toBe("awaiting_review");
    expect(review.hint).not.toContain("submit_user_decision");
    const decide = { planId, reviewRequestId: review.reviewRequestId, decision: "approve" };

    // The agent cannot enter the result in the person's place.
    const relayed = await tenant.agent.fails("submit_user_decision", {
      ...decide,
      result: { verdict: "holds", signedOffBy: "the agent" },
    });
    expect(relayed).toMatch(/^FORBIDDEN: This team lets only people decide/);
    // An approve with no result, or one the schema refuses, changes nothing.
    const missing = await as.person.fails("submit_user_decision", decide);
    expect(missing).toMatch(/^VALIDATION_ERROR: result: step 2 has an outputSchema/);
    const invalid = await as.person.fails("submit_user_decision", {
      ...decide,
      result: { verdict: "maybe" },
    });
    expect(invalid).toMatch(/^VALIDATION_ERROR: result does not satisfy the step's outputSchema/);
    expect(invalid).toContain("signedOffBy");
    expect(invalid).toContain("verdict");
    const withSkip = await as.person.fails("submit_user_decision", {
      ...decide,
      decision: "skip",
      result: { verdict: "holds", signedOffBy: "Ada" },
    });
    expect(withSkip).toMatch(/^VALIDATION_ERROR: result: a result goes only with approve/);
    expect((await stepRow(stepId))[0]).toEqual({ status: "awaiting_input", result: null });

    const entered = { verdict: "holds", signedOffBy: "Ada" };
    const approved = await as.person.ok("submit_user_decision", { ...decide, result: entered });
    expect(approved).toMatchObject({ stepStatus: "completed", planStatus: "executing" });
    expect((await stepRow(stepId))[0]).toEqual({ status: "completed", result: entered });
    const [trail] = await readRows<{ payload: Record<string, unknown> }>(
      tenant.handle.db,
      sql`select payload from plan_audit_log where plan_id = ${planId}::uuid
        and payload->>'action' = 'decision'`,
    );
    expect(trail?.payload).toMatchObject({ decision: "approve", enteredResult: entered });
    const next = await tenant.agent.ok("get_next_step", { planId });
    expect(next.step.stepOrder).toBe(3);
  });

  /** The agent puts the checkpoint up with no proposal; the person answers with `decision`. */
  async function askedThenDecided(
    at: { planId: string; stepId: string },
    decision: string,
    extra: Record<string, unknown> = {},
  ) {
    const review = await tenant.agent.ok("request_user_review", {
      ...at,
      summary: "Over to you.",
    });
    return as.person.ok("submit_user_decision", {
      planId: at.planId,
      reviewRequestId: review.reviewRequestId,
      decision,
      ...extra,
    });
  }

  it("lets the person skip, reject or send back a review with no proposal", async () => {
    const { planId, stepId } = await atTheCheckpoint();
    const modified = await askedThenDecided({ planId, stepId }, "modify", {
      feedback: "Collect the second source first.",
    });
    expect(modified.stepStatus).toBe("in_progress");
    const again = await tenant.agent.ok("get_next_step", { planId });
    const skipped = await askedThenDecided({ planId, stepId: again.step.stepId }, "skip");
    expect(skipped.stepStatus).toBe("skipped");

    const rejected = await atTheCheckpoint();
    const failed = await askedThenDecided(
      { planId: rejected.planId, stepId: rejected.stepId },
      "reject",
    );
    expect(failed.planStatus).toBe("failed");
  });

  it("approves a proposal as shown, never with a result swapped in", async () => {
    const { planId, stepId } = await atTheCheckpoint();
    const proposal = { verdict: "fails", signedOffBy: "pending" };
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Proposed.",
      proposedResult: proposal,
    });
    const swapped = await as.person.fails("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
      result: { verdict: "holds", signedOffBy: "Ada" },
    });
    expect(swapped).toMatch(/^VALIDATION_ERROR: result: this review carries the agent's proposed/);
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect((await stepRow(stepId))[0]).toEqual({ status: "completed", result: proposal });
  });
});
