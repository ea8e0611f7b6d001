/**
 * The checkpoint rule's paths that issue 39 found open, each as the agent that
 * wants past an undecided checkpoint, on every team (the rule holds under both
 * policies), in process on PGlite and PostgreSQL 15: a failed step moved ahead
 * and retried, a deliverable while a checkpoint waits or after a person
 * rejected the plan, evidence on a cancelled plan, research stored against a
 * held step, a linked call standing in for a step Cairn has not paused on; and
 * the database's backstop when a write skips the use cases altogether.
 */
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  planSteps,
  signedInAdmin,
  useFreshTenant,
} from "../support/in-process";
import { readRows } from "../support/rows";

/** The database's own refusal, under the query error drizzle wraps it in. */
async function refusal(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? cause.message : String(error);
  }
  throw new Error("the database took the write");
}

const deliverable = (planId: string) => ({
  planId,
  outputMediaType: "markdown_report",
  content: "# Findings\n\nHeat pumps pay back in 8 years (https://example.org/report).",
});

describe.each(BACKENDS)("the checkpoint rule on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as { person: InProcessAgent; personCtx: ServiceContext };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
  });

  async function plan(types: string[]) {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Guarded",
      researchQuestion: "q",
      steps: planSteps(...types),
    });
    const { steps } = await tenant.agent.ok("get_plan_status", { planId });
    return { planId: planId as string, ids: steps.map((s: { stepId: string }) => s.stepId) };
  }

  const statuses = async (planId: string) =>
    (await tenant.agent.ok("get_plan_status", { planId })).steps.map(
      (s: { status: string }) => s.status,
    );

  for (const policy of ["people_and_agents", "people_only"] as const) {
    it(`fail, reorder and retry move no step ahead of an undecided checkpoint (${policy})`, async () => {
      await setDecisionPolicy(as.personCtx, { decisionPolicy: policy });
      const { planId, ids } = await plan(["search", "checkpoint", "analyze", "synthesize"]);
      const first = await tenant.agent.ok("get_next_step", { planId });
      expect(first.step.stepOrder).toBe(1);
      await tenant.agent.ok("modify_plan", {
        planId,
        action: "fail_step",
        stepId: ids[2],
        reason: "Park it.",
        modificationRationale: "Park step 3 to move it.",
      });
      const moved = await tenant.agent.fails("modify_plan", {
        planId,
        action: "reorder_steps",
        stepIds: [ids[0], ids[2], ids[1], ids[3]],
        modificationRationale: "Work ahead of the person.",
      });
      expect(moved).toMatch(
        /^FORBIDDEN: Step 2 is a checkpoint nobody has decided yet, so step 3, which comes after it, cannot be moved ahead of it/,
      );
      // A retry leaves it where it stands, behind the checkpoint.
      await tenant.agent.ok("modify_plan", {
        planId,
        action: "retry_step",
        stepId: ids[2],
        modificationRationale: "Back to work.",
      });
      const { steps } = await tenant.agent.ok("get_plan_status", { planId });
      expect(steps.map((s: { stepId: string }) => s.stepId)).toEqual(ids);
      await tenant.agent.submit(planId, first.step.stepId);
      expect((await tenant.agent.ok("get_next_step", { planId })).step.stepOrder).toBe(2);
      expect((await tenant.agent.ok("get_next_step", { planId })).status).toBe("no_pending_steps");
    });
  }

  it("fails a step behind the checkpoint that is handed out, and the plan waits for the person", async () => {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
    const { planId, ids } = await plan(["checkpoint", "analyze"]);
    expect((await tenant.agent.ok("get_next_step", { planId })).step.stepOrder).toBe(1);
    const failed = await tenant.agent.ok("modify_plan", {
      planId,
      action: "fail_step",
      stepId: ids[1],
      reason: "Not needed.",
      modificationRationale: "Drop step 2.",
    });
    expect(failed.steps.map((s: { status: string }) => s.status)).toEqual([
      "in_progress",
      "failed",
    ]);
    // The checkpoint itself is not the agent's to fail.
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "fail_step",
        stepId: ids[0],
        reason: "Not needed.",
        modificationRationale: "Skip the person.",
      }),
    ).toMatch(/^FORBIDDEN: Step 1 is a checkpoint .* cannot fail it/);
  });

  it("takes a deliverable only with every checkpoint decided and the plan not failed, and puts it on the trail", async () => {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
    const { planId } = await plan(["search", "checkpoint"]);
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    expect(await tenant.agent.fails("store_research_output", deliverable(planId))).toMatch(
      /^CONFLICT: Step 2 of plan .* is a checkpoint nobody has decided yet, so the plan takes no deliverable/,
    );
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: checkpoint.step.stepId,
      summary: "Look please.",
    });
    expect(await tenant.agent.fails("store_research_output", deliverable(planId))).toMatch(
      /^CONFLICT: .* takes no deliverable/,
    );
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "reject",
      feedback: "Wrong question.",
    });
    expect((await tenant.agent.ok("get_plan_status", { planId })).status).toBe("failed");
    expect(await tenant.agent.fails("store_research_output", deliverable(planId))).toMatch(
      /^INVALID_TRANSITION: Plan .* is failed, so it takes no deliverable; nothing was stored/,
    );
    const outputs = await readRows<{ n: number }>(
      tenant.handle.db,
      sql`select count(*)::int as n from research_output where plan_id = ${planId}`,
    );
    expect(outputs).toEqual([{ n: 0 }]);

    // Decided and done: stored, and the trail holds what was stored.
    const done = await plan(["search"]);
    const step = await tenant.agent.ok("get_next_step", { planId: done.planId });
    await tenant.agent.submit(done.planId, step.step.stepId);
    const stored = await tenant.agent.ok("store_research_output", deliverable(done.planId));
    const trail = await readRows<{ payload: unknown }>(
      tenant.handle.db,
      sql`select payload from plan_audit_log where plan_id = ${done.planId} and event_type = 'output_stored'`,
    );
    expect(trail).toEqual([
      {
        payload: expect.objectContaining({
          outputId: stored.outputId,
          outputMediaType: "markdown_report",
          contentSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        }),
      },
    ]);
  });

  it("takes no evidence on a cancelled plan and no research against a held step", async () => {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
    const { planId, ids } = await plan(["search", "checkpoint", "analyze"]);
    const first = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, first.step.stepId);
    const artifact = {
      artifactType: "finding",
      title: "Ahead of the person",
      content: { finding: "x" },
      contentText: "A finding written ahead of the person.",
      confidence: 0.5,
      planId,
    };
    expect(await tenant.agent.fails("store_research", { ...artifact, stepId: ids[2] })).toMatch(
      /^CONFLICT: Step 2 of plan .* is a checkpoint nobody has decided yet, and the steps after it have no research stored/,
    );
    // The step before the checkpoint, and the plan itself, still take research.
    await tenant.agent.ok("store_research", { ...artifact, stepId: ids[0] });
    await tenant.agent.ok("add_step_evidence", {
      planId,
      stepId: ids[0],
      evidence: { sources: [{ url: "https://example.org/a" }] },
    });
    await tenant.agent.ok("cancel_plan", { planId, reason: "Dropped." });
    expect(
      await tenant.agent.fails("add_step_evidence", {
        planId,
        stepId: ids[0],
        evidence: { sources: [{ url: "https://example.org/b" }] },
      }),
    ).toMatch(/^INVALID_TRANSITION: Plan .* is cancelled, so it takes no evidence/);
    expect(await tenant.agent.fails("store_research", artifact)).toMatch(
      /^INVALID_TRANSITION: Plan .* is cancelled, so it takes no research/,
    );
  });

  it("lets no linked call stand in for a step Cairn has not paused on", async () => {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_and_agents" });
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Linked",
      researchQuestion: "q",
      steps: [
        ...planSteps("search"),
        {
          stepType: "extract",
          instructions: "Extract prices.",
          tool: "extract_data",
          arguments: {
            schema: { type: "object", properties: { price: { type: "number" } } },
            text: "A heat pump costs 9000 euros.",
          },
        },
      ],
    });
    const { steps } = await tenant.agent.ok("get_plan_status", { planId });
    const linked = await tenant.agent.fails("extract_data", {
      schema: { type: "object", properties: { price: { type: "number" } } },
      text: "My own text: 1 euro.",
      completesStep: { planId, stepId: steps[1]?.stepId },
    });
    expect(linked).toMatch(
      /^CONFLICT: completesStep: step 2 is Cairn's to run and the plan has not paused on it/,
    );
    expect(await statuses(planId)).toEqual(["pending", "pending"]);
  });

  it("refuses, in the database itself, a held step started or completed and a people-only checkpoint passed without a person", async () => {
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_only" });
    const { planId, ids } = await plan(["checkpoint", "analyze"]);
    const db = tenant.handle.db;
    for (const status of ["in_progress", "completed"]) {
      expect(
        await refusal(
          db.execute(
            sql`update plan_step set status = ${status}::step_status where id = ${ids[1]}`,
          ),
        ),
      ).toMatch(/stands after checkpoint 1, which nobody has decided/);
    }
    for (const status of ["completed", "skipped"]) {
      expect(
        await refusal(
          db.execute(
            sql`update plan_step set status = ${status}::step_status where id = ${ids[0]}`,
          ),
        ),
      ).toMatch(/checkpoint 1 of plan .* without a person's decision/);
    }
    expect(await statuses(planId)).toEqual(["pending", "pending"]);
    // Where agents may relay, the checkpoint's own result passes it, as the use cases allow.
    await setDecisionPolicy(as.personCtx, { decisionPolicy: "people_and_agents" });
    await db.execute(sql`update plan_step set status = 'completed' where id = ${ids[0]}`);
    await db.execute(sql`update plan_step set status = 'in_progress' where id = ${ids[1]}`);
    expect(await statuses(planId)).toEqual(["completed", "in_progress"]);
  });
});
