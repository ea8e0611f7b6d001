/**
 * Where the team says people decide, only a person decides (docs/reviews.md),
 * by every path an agent has to the same effect: a deadline it times, a result
 * for a checkpoint step, removing or failing that step, work past a waiting
 * review (a result or a linked server-step call), a proposal outside the
 * step's contract, and a review on a paused plan that nobody could then
 * finish. Each as the agent that wants past its own checkpoint, in process, on
 * PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import {
  extractStep,
  type InProcessAgent,
  inProcessAgent,
  planSteps,
  signedInAdmin,
  useFreshTenant,
} from "../support/in-process";
import { readRows } from "../support/rows";

describe.each(BACKENDS)("people-only checkpoints on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as { person: InProcessAgent; personCtx: ServiceContext };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
  });

  /** A plan of the given steps with its first step handed out. */
  async function planWithFirstStep(steps: unknown[], extra: Record<string, unknown> = {}) {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "People decide",
      researchQuestion: "q",
      steps,
      ...extra,
    });
    const first = await tenant.agent.ok("get_next_step", { planId });
    return { planId: planId as string, first };
  }

  /** Step 1 done, the checkpoint (step 2) handed out, step 3 skipped by the branch, step 4 waiting. */
  async function expectCheckpointNotSkipped(planId: string) {
    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status.steps.map((s) => s.status)).toEqual([
      "completed",
      "in_progress",
      "skipped",
      "pending",
    ]);
  }

  /** The agent's result for a step it should not work on yet. */
  const workAhead = (planId: string, stepId: string | undefined) =>
    tenant.agent.fails("submit_step_result", {
      planId,
      stepId,
      result: { summary: "Ahead of the person." },
      stepExecutionReport: {
        thinking: "Working ahead.",
        webSearches: [],
        webFetches: [],
        otherToolCalls: [],
        subagents: [],
      },
    });

  /** The agent puts the checkpoint up for review and the person approves it. */
  async function approveCheckpoint(planId: string, stepId: string) {
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Ready for your look.",
      proposedResult: { ok: true },
    });
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
  }

  it("refuses a deadline the agent times that would take the team's approve", async () => {
    await setReviewDefaults(as.personCtx, { deadlineSeconds: 86_400, onTimeout: "approve" });
    try {
      const { planId, first } = await planWithFirstStep(planSteps("search", "synthesize"));
      const request = { planId, stepId: first.step.stepId, summary: "Found three sources." };
      // No onTimeout: the team's approve would run at the agent's time.
      const inherited = await tenant.agent.fails("request_user_review", {
        ...request,
        deadlineSeconds: 1,
      });
      expect(inherited).toMatch(/^FORBIDDEN: deadlineSeconds\/deadlineAt: .*"approve"/);
      expect(inherited).toContain("Leave the deadline out for the team's default");
      const named = await tenant.agent.fails("request_user_review", {
        ...request,
        deadlineAt: new Date(Date.now() + 60_000).toISOString(),
        onTimeout: "skip",
      });
      expect(named).toMatch(/^FORBIDDEN: onTimeout: /);
      // Nothing was stored by either refusal: the step is still the agent's.
      const status = await tenant.agent.ok("get_plan_status", { planId });
      expect(status.status).toBe("executing");
      // An action that leaves the step to a person is the agent's to choose.
      const escalating = await tenant.agent.ok("request_user_review", {
        ...request,
        deadlineSeconds: 1,
        onTimeout: "escalate",
      });
      expect(escalating.onTimeout).toBe("escalate");
      await as.person.ok("submit_user_decision", {
        planId,
        reviewRequestId: escalating.reviewRequestId,
        decision: "modify",
        feedback: "Again, please.",
      });
      // The team's whole default is the team's own choice, and stands.
      const again = await tenant.agent.ok("get_next_step", { planId });
      const byTeam = await tenant.agent.ok("request_user_review", {
        ...request,
        stepId: again.step.stepId,
      });
      expect(byTeam.onTimeout).toBe("approve");
      expect(Date.parse(byTeam.dueAt ?? "") - Date.now()).toBeGreaterThan(86_000_000);
    } finally {
      await setReviewDefaults(as.personCtx, { deadlineSeconds: null, onTimeout: null });
    }
  });

  it("lets only a person's review past a checkpoint step", async () => {
    const { planId, first } = await planWithFirstStep(
      planSteps("search", "checkpoint", "synthesize"),
    );
    await tenant.agent.submit(planId, first.step.stepId);
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    expect(checkpoint.step.stepType).toBe("checkpoint");
    // The hand-out tells the agent how a checkpoint ends: with a review.
    expect(checkpoint.hint).toMatch(/call request_user_review with this stepId/);
    expect(checkpoint.hint).not.toContain("submit_step_result");
    const stepId = checkpoint.step.stepId;
    const submitted = await tenant.agent.fails("submit_step_result", {
      planId,
      stepId,
      result: { ok: true },
      stepExecutionReport: {
        thinking: "I approve myself.",
        webSearches: [],
        webFetches: [],
        otherToolCalls: [],
        subagents: [],
      },
    });
    expect(submitted).toMatch(/^FORBIDDEN: Step 2 is a checkpoint .* request_user_review/);
    const failed = await tenant.agent.fails("modify_plan", {
      planId,
      action: "fail_step",
      stepId,
      reason: "Not needed.",
      modificationRationale: "Skip the person.",
    });
    expect(failed).toMatch(/^FORBIDDEN: Step 2 is a checkpoint .* cannot fail it/);
    // A checkpoint still to come cannot be removed either.
    const ahead = await planWithFirstStep(planSteps("search", "checkpoint"));
    const { steps: aheadSteps } = await tenant.agent.ok("get_plan_status", {
      planId: ahead.planId,
    });
    const removed = await tenant.agent.fails("modify_plan", {
      planId: ahead.planId,
      action: "remove_step",
      stepId: aheadSteps[1]?.stepId,
      modificationRationale: "Skip the person.",
    });
    expect(removed).toMatch(/^FORBIDDEN: Step 2 is a checkpoint .* cannot remove it/);
    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status.steps.find((s) => s.stepId === stepId)?.status).toBe("in_progress");

    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Ready for your look.",
      proposedResult: { ok: true },
    });
    const decided = await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(decided).toMatchObject({ stepStatus: "completed", channel: "web" });

    // Where agents may relay, the agent's own result passes a checkpoint, as before.
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_and_agents" });
    try {
      const other = await planWithFirstStep(planSteps("checkpoint"));
      const done = await tenant.agent.submit(other.planId, other.first.step.stepId);
      expect(done.planStatus).toBe("completed");
    } finally {
      await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
    }
  });

  it("lets no branch skip a checkpoint: it is handed out next", async () => {
    const { planId, first } = await planWithFirstStep(
      planSteps("search", "checkpoint", "synthesize", "critique"),
      {
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "result.go === true",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 4 },
          },
        ],
      },
    );
    const submitted = await tenant.agent.submit(planId, first.step.stepId, {
      result: { go: true },
    });
    expect(submitted.firedConditions[0]?.skippedStepIds).toHaveLength(1);
    const next = await tenant.agent.ok("get_next_step", { planId });
    expect(next.step).toMatchObject({ stepOrder: 2, stepType: "checkpoint" });
    await expectCheckpointNotSkipped(planId);
  });

  it("lets no branch of a step Cairn runs skip a checkpoint either", async () => {
    const { planId, first } = await planWithFirstStep(
      [
        {
          stepType: "search",
          instructions: "Search the library.",
          tool: "search_sources",
          arguments: { query: "heat pumps" },
        },
        ...planSteps("checkpoint", "synthesize", "critique"),
      ],
      {
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: 'status === "completed"',
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 4 },
          },
        ],
      },
    );
    expect(first.serverSteps).toHaveLength(1);
    expect(first.step).toMatchObject({ stepOrder: 2, stepType: "checkpoint" });
    await expectCheckpointNotSkipped(planId);
  });

  it("moves no step after an undecided checkpoint ahead of it, nor the checkpoint past them", async () => {
    const { planId, first } = await planWithFirstStep(
      planSteps("search", "checkpoint", "synthesize", "critique"),
    );
    const ids = (await tenant.agent.ok("get_plan_status", { planId })).steps.map(
      (s: { stepId: string }) => s.stepId,
    );
    const reorder = (stepIds: (string | undefined)[]) => ({
      planId,
      action: "reorder_steps",
      stepIds,
      modificationRationale: "Work ahead of the person.",
    });
    // Still pending, the checkpoint holds its place as well as when it is handed out.
    for (const handedOut of [false, true]) {
      if (handedOut) {
        await tenant.agent.submit(planId, first.step.stepId);
        expect((await tenant.agent.ok("get_next_step", { planId })).step.stepOrder).toBe(2);
      }
      const ahead = await tenant.agent.fails(
        "modify_plan",
        reorder([ids[0], ids[2], ids[1], ids[3]]),
      );
      expect(ahead).toMatch(
        /^FORBIDDEN: Step 2 is a checkpoint nobody has decided yet, so step 3, which comes after it, cannot be moved ahead of it .* Nothing was changed/,
      );
      const last = await tenant.agent.fails(
        "modify_plan",
        reorder([ids[0], ids[2], ids[3], ids[1]]),
      );
      expect(last).toMatch(/^FORBIDDEN: Step 2 is a checkpoint nobody has decided yet/);
      const unchanged = await tenant.agent.ok("get_plan_status", { planId });
      expect(unchanged.steps.map((s: { stepId: string }) => s.stepId)).toEqual(ids);
    }
    // The steps after it may change places among themselves.
    const swapped = await tenant.agent.ok("modify_plan", reorder([ids[0], ids[1], ids[3], ids[2]]));
    expect(swapped.steps.map((s: { stepId: string }) => s.stepId)).toEqual([
      ids[0],
      ids[1],
      ids[3],
      ids[2],
    ]);
  });

  it("refuses a checkpoint step that Cairn would run itself", async () => {
    const refused = await tenant.agent.fails("create_research_plan", {
      name: "Cairn passes the checkpoint",
      researchQuestion: "q",
      steps: [{ ...extractStep, stepType: "checkpoint" }],
    });
    expect(refused).toMatch(
      /^VALIDATION_ERROR: steps\[0\]\.tool: a checkpoint step is a pause for a person/,
    );
  });

  it("holds the steps after a checkpoint nobody has put up for review yet: no hand-out, no result, no linked call", async () => {
    const { planId, first } = await planWithFirstStep([
      ...planSteps("search", "checkpoint", "synthesize"),
      extractStep,
    ]);
    await tenant.agent.submit(planId, first.step.stepId);
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    expect(checkpoint.step).toMatchObject({ stepOrder: 2, stepType: "checkpoint" });

    // Another agent asks while the checkpoint is held: nothing is handed out.
    const other = await tenant.agent.ok("get_next_step", { planId });
    expect(other).toMatchObject({ status: "no_pending_steps", inProgressCount: 1 });
    expect(other.hint).toContain("Step 2 is a checkpoint nobody has decided yet");
    const { steps } = await tenant.agent.ok("get_plan_status", { planId });
    const [, , third, fourth] = steps;
    const ahead = await workAhead(planId, third?.stepId);
    expect(ahead).toMatch(
      /^CONFLICT: Step 2 of plan .* is a checkpoint nobody has decided yet.*Nothing was stored/,
    );
    const linked = await tenant.agent.fails("extract_data", {
      schema: { type: "object", properties: { price: { type: "number" } } },
      text: "9000 euros.",
      completesStep: { planId, stepId: fourth?.stepId },
    });
    expect(linked).toMatch(/^CONFLICT: Step 2 of plan .* is a checkpoint nobody has decided yet/);
    const held = await tenant.agent.ok("get_plan_status", { planId });
    expect(held.steps.map((s) => s.status)).toEqual([
      "completed",
      "in_progress",
      "pending",
      "pending",
    ]);

    // Once the person has decided, the step after it is handed out.
    await approveCheckpoint(planId, checkpoint.step.stepId);
    const after = await tenant.agent.ok("get_next_step", { planId });
    expect(after.step).toMatchObject({ stepId: third?.stepId, stepOrder: 3 });
  });

  it("runs no step of its own after a checkpoint nobody has decided, until it is decided", async () => {
    const searchLibrary = {
      stepType: "search",
      instructions: "Search the library.",
      tool: "search_sources",
      arguments: { query: "heat pumps" },
    };
    const { planId, first } = await planWithFirstStep([...planSteps("checkpoint"), searchLibrary]);
    expect(first.step).toMatchObject({ stepOrder: 1, stepType: "checkpoint" });
    const other = await tenant.agent.ok("get_next_step", { planId });
    expect(other).toMatchObject({ status: "no_pending_steps", inProgressCount: 1 });
    expect(other.serverSteps ?? []).toEqual([]);
    const held = await tenant.agent.ok("get_plan_status", { planId });
    expect(held.steps.map((s) => s.status)).toEqual(["in_progress", "pending"]);

    await approveCheckpoint(planId, first.step.stepId);
    const after = await tenant.agent.ok("get_next_step", { planId });
    expect(after.status).toBe("plan_complete");
    expect(after.serverSteps?.map((run: { stepId: string }) => run.stepId)).toEqual([
      held.steps[1]?.stepId,
    ]);
  });

  it("holds the steps after a waiting review: no result, no linked server-step call", async () => {
    const { planId, first } = await planWithFirstStep([
      ...planSteps("search", "synthesize"),
      extractStep,
    ]);
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "Three sources.",
    });
    const { steps } = await tenant.agent.ok("get_plan_status", { planId });
    const [, second, third] = steps;
    const later = await workAhead(planId, second?.stepId);
    expect(later).toMatch(
      new RegExp(`^CONFLICT: .*review ${review.reviewRequestId} of step 1.*Nothing was stored`),
    );
    const linked = await tenant.agent.fails("extract_data", {
      schema: { type: "object", properties: { price: { type: "number" } } },
      text: "9000 euros.",
      completesStep: { planId, stepId: third?.stepId },
    });
    expect(linked).toMatch(new RegExp(`^CONFLICT: .*review ${review.reviewRequestId} of step 1`));
    const status = await tenant.agent.ok("get_plan_status", { planId });
    expect(status.steps.map((s) => s.status)).toEqual(["awaiting_input", "pending", "pending"]);

    // After the person's decision, the same result is taken.
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    const taken = await tenant.agent.submit(planId, second?.stepId ?? "");
    expect(taken.stepStatus).toBe("completed");
  });

  it("checks a proposal against the step's outputSchema when the review is requested", async () => {
    const outputSchema = {
      type: "object",
      properties: { verdict: { type: "string" } },
      required: ["verdict"],
    };
    const { planId, first } = await planWithFirstStep([
      { stepType: "analyze", instructions: "Decide.", outputSchema },
      ...planSteps("synthesize"),
    ]);
    const request = { planId, stepId: first.step.stepId, summary: "My verdict." };
    const wrong = await tenant.agent.fails("request_user_review", {
      ...request,
      proposedResult: { verdict: 42 },
    });
    expect(wrong).toMatch(/^VALIDATION_ERROR: proposedResult does not satisfy .*\/verdict/);
    const none = await tenant.agent.fails("request_user_review", request);
    expect(none).toMatch(/^VALIDATION_ERROR: proposedResult: step 1 has an outputSchema/);
    const review = await tenant.agent.ok("request_user_review", {
      ...request,
      proposedResult: { verdict: "holds" },
    });

    // A schema the proposal no longer satisfies (a review older than this
    // check) cannot be approved; the person can still send the step back.
    await tenant.handle.db.execute(
      sql`update plan_step set output_schema = ${JSON.stringify({ ...outputSchema, properties: { verdict: { type: "number" } } })}::jsonb where id = ${first.step.stepId}::uuid`,
    );
    const approve = await as.person.fails("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(approve).toMatch(/^VALIDATION_ERROR: proposedResult does not satisfy .*modify it/);
    await tenant.handle.db.execute(
      sql`update plan_step set output_schema = ${JSON.stringify(outputSchema)}::jsonb where id = ${first.step.stepId}::uuid`,
    );
    const approved = await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(approved.stepStatus).toBe("completed");
    const [step] = await readRows<{ result: unknown }>(
      tenant.handle.db,
      sql`select result from plan_step where id = ${first.step.stepId}::uuid`,
    );
    expect(step?.result).toEqual({ verdict: "holds" });
  });

  it("refuses a review on a paused plan, and the calls it suggests finish the plan", async () => {
    // The sequence: A holds step 1; B's pull runs server step 2, whose
    // tool fails (no model configured), and the plan pauses.
    const { planId, first } = await planWithFirstStep([...planSteps("search"), extractStep], {
      branchingConditions: [
        { afterStepOrder: 1, conditionExpression: "result.dead === true", ifTrueAction: "fail" },
      ],
    });
    const b = inProcessAgent(tenant.agent.ctx);
    const paused = await b.ok("get_next_step", { planId });
    expect(paused).toMatchObject({ status: "paused", pauseReason: { type: "tool_error" } });
    const refused = await tenant.agent.fails("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "A dead end.",
      proposedResult: { dead: true },
      deadlineSeconds: 1,
      onTimeout: "reject",
    });
    expect(refused).toMatch(/^CONFLICT: Plan .* is paused on server-run step 2, so no review/);
    expect(refused).toContain(`suggests in pauseReason (${paused.pauseReason.suggestedTool.name})`);

    // The suggested call answers the pause; then the review is taken, and the
    // person's approve (whose proposal fires the fail) ends the plan.
    const call = paused.pauseReason.suggestedTool;
    const unblocked = await b.call(call.name, { ...call.arguments, result: { price: 9000 } });
    expect(unblocked.isError).toBe(false);
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "A dead end.",
      proposedResult: { dead: true },
    });
    const decided = await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(decided.planStatus).toBe("failed");
  });

  it("names every reason a plan waits, and records the policy each decision was made under", async () => {
    const { planId, first } = await planWithFirstStep(planSteps("search", "synthesize"));
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "Look.",
    });
    // A plan left both paused and waiting by a version that allowed it.
    const pause = {
      type: "tool_error",
      stepId: first.step.stepId,
      stepOrder: 2,
      tool: "extract_data",
      message: "The tool extract_data failed.",
      suggestedTool: { name: "modify_plan", arguments: { action: "retry_step" } },
    };
    await tenant.handle.db.execute(
      sql`update research_plan set pause_reason = ${JSON.stringify(pause)}::jsonb where id = ${planId}::uuid`,
    );
    const waiting = await tenant.agent.ok("get_next_step", { planId });
    expect(waiting).toMatchObject({
      status: "awaiting_review",
      review: { reviewRequestId: review.reviewRequestId },
      pauseReason: { type: "tool_error", stepOrder: 2 },
    });
    expect(waiting.hint).toContain("The plan is also paused");
    await tenant.handle.db.execute(
      sql`update research_plan set pause_reason = null where id = ${planId}::uuid`,
    );

    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    const [row] = await readRows<{ policy: string; payloadPolicy: string }>(
      tenant.handle.db,
      sql`select d.decision_policy as policy, l.payload->>'decisionPolicy' as "payloadPolicy"
        from review_decision d join plan_audit_log l
          on l.plan_id = d.plan_id and l.payload->>'action' = 'decision'
        where d.review_request_id = ${review.reviewRequestId}::uuid`,
    );
    expect(row).toEqual({ policy: "people_only", payloadPolicy: "people_only" });
  });
});
