/**
 * A plan's revisions and get_plan_history (docs/history-and-forks.md): its
 * creation is revision 1, every modify_plan action, a decision that changes
 * a step and a branch that skips steps the next one, each in the change's
 * transaction; a result is none. In process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { HISTORY_PAGE_SIZE } from "../../lib/services/plans/get-plan-history";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("plan history on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("shows a plan changed three times as four revisions with their diffs, newest first", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "History",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const { planId } = created;
    const [one, two, three] = created.steps.map((s: { stepId: string }) => s.stepId);
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: two,
      instructions: "Compare by cost.",
      modificationRationale: "Cost matters most.",
    });
    const added = await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      insertAfterOrder: 0,
      steps: [{ stepType: "custom", instructions: "Scope the question." }],
      modificationRationale: "Scope first.",
    });
    const newStep = added.steps[0]?.stepId;
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "reorder_steps",
      stepIds: [newStep, one, three, two],
      modificationRationale: "Synthesize before the comparison.",
    });
    // A result changes no definition: no revision.
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);

    const history = await tenant.agent.ok("get_plan_history", { planId });
    expect(history.nextCursor).toBeNull();
    expect(history.revisions.map((r) => [r.revision, r.cause, r.rationale])).toEqual([
      [4, "reorder_steps", "Synthesize before the comparison."],
      [3, "add_steps", "Scope first."],
      [2, "update_step_instructions", "Cost matters most."],
      [1, "created", null],
    ]);
    const [reorder, add, update, creation] = history.revisions;
    expect(reorder?.diff.moved).toEqual([
      { stepId: three, from: 4, to: 3 },
      { stepId: two, from: 3, to: 4 },
    ]);
    expect(add?.diff).toMatchObject({
      added: [{ stepId: newStep, stepOrder: 1, instructions: { text: "Scope the question." } }],
      moved: [],
    });
    expect(update?.diff.instructions).toEqual([
      {
        stepId: two,
        stepOrder: 2,
        from: { text: "Step 2: do the analyze work.", cut: false },
        to: { text: "Compare by cost.", cut: false },
      },
    ]);
    expect(update?.by).toEqual({ type: "api_key", label: tenant.agent.ctx.actor.label });
    expect(creation?.diff.added.map((s) => s.stepId)).toEqual([one, two, three]);
  });

  it("makes a revision of a reviewer's modify and of a branch's skips", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Decisions",
      researchQuestion: "q",
      steps: planSteps("checkpoint", "search", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 2,
          conditionExpression: "confidence > 0.8",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
      ],
    });
    const { planId } = created;
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: checkpoint.step.stepId,
      summary: "Please check.",
    });
    await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "modify",
      feedback: "Narrow it to Europe.",
    });
    const again = await tenant.agent.ok("get_next_step", { planId });
    const second = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: again.step.stepId,
      summary: "Narrowed.",
    });
    await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId: second.reviewRequestId,
      decision: "approve",
    });
    const search = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, search.step.stepId, { confidence: 0.9 });

    const { revisions } = await tenant.agent.ok("get_plan_history", { planId });
    expect(revisions.map((r) => r.cause)).toEqual([
      "branch_skipped_steps",
      "review_modify",
      "created",
    ]);
    expect(revisions[0]?.diff.status).toEqual([
      { stepId: created.steps[2].stepId, stepOrder: 3, to: "skipped" },
    ]);
    expect(revisions[1]).toMatchObject({
      rationale: "Narrow it to Europe.",
      diff: { instructions: [{ stepId: checkpoint.step.stepId, to: { cut: false } }] },
    });
    expect(revisions[1]?.diff.instructions[0]?.to?.text).toMatch(
      /User feedback: Narrow it to Europe\.$/,
    );
  });

  it("pages with the shared cursor, neither skipping nor repeating a revision", async () => {
    const { planId, steps } = await tenant.agent.ok("create_research_plan", {
      name: "Many",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const changes = HISTORY_PAGE_SIZE + 2;
    for (let i = 0; i < changes; i++) {
      await tenant.agent.ok("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId: steps[0].stepId,
        instructions: `Version ${i + 2}`,
        modificationRationale: `change ${i + 1}`,
      });
    }
    const page = await tenant.agent.ok("get_plan_history", { planId });
    expect(page.revisions).toHaveLength(HISTORY_PAGE_SIZE);
    expect(page.nextCursor).not.toBeNull();
    const rest = await tenant.agent.ok("get_plan_history", { planId, cursor: page.nextCursor });
    expect(rest.nextCursor).toBeNull();
    expect([...page.revisions, ...rest.revisions].map((r) => r.revision)).toEqual(
      Array.from({ length: changes + 1 }, (_, i) => changes + 1 - i),
    );
    expect(
      await tenant.agent.fails("get_plan_history", { planId, cursor: "bm90IGEgY3Vyc29y" }),
    ).toMatch(/^VALIDATION_ERROR: cursor is not one this list gave/);
  });

  it("keeps a long rationale and long instructions within bounds, cut and marked", async () => {
    const { planId, steps } = await tenant.agent.ok("create_research_plan", {
      name: "Long",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: steps[0].stepId,
      instructions: "y".repeat(15_000),
      modificationRationale: "z".repeat(9_000),
    });
    const [latest] = (await tenant.agent.ok("get_plan_history", { planId })).revisions;
    expect(latest?.rationaleCut).toBe(true);
    expect(latest?.rationale?.length).toBe(2_000);
    expect(latest?.diff.instructions[0]?.to).toMatchObject({ cut: true });
    expect(latest?.diff.instructions[0]?.to?.text.length).toBe(400);
  });

  it("reverts to revision 1 as a new revision, and refuses a revert that would touch a started step", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Revert",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const { planId } = created;
    const [one, two, three] = created.steps.map((s: { stepId: string }) => s.stepId);
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: two,
      instructions: "Compare by cost.",
      modificationRationale: "Cost.",
    });
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "remove_step",
      stepId: three,
      modificationRationale: "No write-up.",
    });
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      insertAfterOrder: 0,
      steps: [{ stepType: "custom", instructions: "Scope it." }],
      modificationRationale: "Scope first.",
    });
    const reverted = await tenant.agent.ok("modify_plan", {
      planId,
      action: "revert_revision",
      revision: 1,
      modificationRationale: "Back to the original plan.",
    });
    expect(reverted.steps.map((s) => [s.stepId, s.stepOrder, s.status])).toEqual([
      [one, 1, "pending"],
      [two, 2, "pending"],
      [three, 3, "pending"],
    ]);
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.steps.map((s) => s.instructions)).toEqual([
      "Step 1: do the search work.",
      "Step 2: do the analyze work.",
      "Step 3: do the synthesize work.",
    ]);
    const [latest] = (await tenant.agent.ok("get_plan_history", { planId })).revisions;
    expect(latest).toMatchObject({
      revision: 5,
      cause: "revert_revision",
      rationale: "Back to the original plan.",
      diff: {
        added: [{ stepId: three, stepOrder: 3 }],
        removed: [{ stepOrder: 1, instructions: { text: "Scope it." } }],
        instructions: [{ stepId: two, to: { text: "Step 2: do the analyze work." } }],
      },
    });

    // Step 1 done; a revert to a revision where step 1 read otherwise is refused.
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: one,
      instructions: "Search again, wider.",
      modificationRationale: "Wider.",
    });
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "revert_revision",
        revision: 1,
        modificationRationale: "Back.",
      }),
    ).toMatch(
      /^INVALID_TRANSITION: Step 1 is completed, and reverting plan .* to revision 1 would change its instructions; a revert changes only steps not yet started/,
    );
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "revert_revision",
        revision: 99,
        modificationRationale: "Back.",
      }),
    ).toMatch(/^NOT_FOUND: Plan .* has no revision 99/);
    // Reverting to the latest revision is allowed: step 1 stands as it does now.
    const again = await tenant.agent.ok("modify_plan", {
      planId,
      action: "revert_revision",
      revision: 6,
      modificationRationale: "Same as revision 6.",
    });
    expect(again.steps.map((s) => s.status)).toEqual(["completed", "pending", "pending"]);
  });
});
