/**
 * The loop's calls racing on one plan, in process, on PostgreSQL 15 (PGlite
 * runs one statement at a time, so nothing races there). The last steps of a
 * plan submitted at the same moment must still complete it, a step must be
 * handed out once, whichever call waited for whose lock, and a hand-out waits
 * for a change to its plan but not for a submit (`PLAN_LOCK`).
 */

import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { PLAN_LOCK } from "@/lib/services/loop/plan-lock";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import type { ServiceContext } from "@/lib/services/shared/context";
import { createPostgresDatabase } from "./support/databases";
import { tenantContext } from "./support/in-process";
import { waitingForLocks } from "./support/lock-waits";
import { report } from "./support/mcp-client";

describe("the loop under concurrency on postgres", () => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;
  let url: string;
  let other: postgres.Sql;

  beforeAll(async () => {
    url = await createPostgresDatabase();
    handle = await openDatabase({ kind: "postgres", url });
    await handle.migrate();
    ctx = await tenantContext(handle.db, "Race");
    other = postgres(url, { max: 2, onnotice: () => {} });
  });
  afterAll(async () => {
    await other?.end();
    await handle?.close();
  });

  /** A plan of `count` agent steps, the first `handed` of them handed out. */
  async function planWithHandedOut(name: string, count: number, handed: number) {
    const { planId } = await createPlan(ctx, {
      name,
      researchQuestion: "q",
      steps: Array.from({ length: count }, (_, i) => ({
        stepType: "search" as const,
        instructions: `part ${i + 1}`,
      })),
    });
    const ids: string[] = [];
    for (let i = 0; i < handed; i += 1) {
      const answer = await getNextStep(ctx, { planId });
      ids.push(answer.status === "ready" ? answer.step.stepId : "");
    }
    expect(ids).not.toContain("");
    return { planId, ids };
  }

  /**
   * Runs `inside` while another connection holds the plan's row `for <lock>`
   * and has made `change` to it; commits both after `inside`.
   */
  async function whilePlanHeld<T>(
    planId: string,
    lock: string,
    change: (holder: postgres.ReservedSql) => Promise<unknown>,
    inside: () => Promise<T>,
  ): Promise<T> {
    const holder = await other.reserve();
    try {
      await holder`begin`;
      await holder.unsafe(`select id from research_plan where id = $1 for ${lock}`, [planId]);
      await change(holder);
      return await inside();
    } finally {
      await holder`commit`;
      holder.release();
    }
  }

  /** `promise`, or a failure that says what waited, after 10 s. */
  function within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within 10 s`)), 10_000);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
  }

  it("hands out a step while another agent's submit holds the plan, and waits for a change to it", async () => {
    const { planId } = await planWithHandedOut("Beside a submit", 3, 1);
    // A submit in flight holds the plan as PLAN_LOCK.commonSubmit and has
    // updated its row: the claim neither waits for it nor goes stale, and
    // hands out the next free step (before PLAN_LOCK, it waited for the commit
    // that here comes only after its answer).
    const beside = await whilePlanHeld(
      planId,
      PLAN_LOCK.commonSubmit,
      (holder) => holder`update research_plan set updated_at = now() where id = ${planId}`,
      () => within(getNextStep(ctx, { planId }), "The claim beside a submit"),
    );
    expect(beside.status === "ready" && beside.step.stepOrder).toBe(2);

    // A change (here a cancel, as cancel_plan writes it) makes the claim wait,
    // and the claim then reads what it left: nothing is handed out.
    let pending: Promise<Awaited<ReturnType<typeof getNextStep>>> | undefined;
    await whilePlanHeld(
      planId,
      PLAN_LOCK.change,
      (holder) =>
        holder`update research_plan set status = 'cancelled', updated_at = now() where id = ${planId}`,
      async () => {
        pending = getNextStep(ctx, { planId });
        pending.catch(() => {});
        await waitingForLocks(other, "claim the next step of an executing plan", 1);
      },
    );
    expect((await pending)?.status).toBe("plan_cancelled");
  });

  it("completes a plan whose steps are all submitted at once, every time", async () => {
    const count = 8;
    for (let round = 0; round < 15; round += 1) {
      const { planId } = await createPlan(ctx, {
        name: `Race ${round}`,
        researchQuestion: "q",
        steps: Array.from({ length: count }, (_, i) => ({
          stepType: "search" as const,
          instructions: `part ${i + 1}`,
        })),
      });
      const answers = await Promise.all(
        Array.from({ length: count }, () => getNextStep(ctx, { planId })),
      );
      const ids = answers.map((answer) => (answer.status === "ready" ? answer.step.stepId : ""));
      expect(new Set(ids).size).toBe(count);
      expect(ids).not.toContain("");
      // One call started the plan (get-next-step.ts's one-statement start, or
      // its transaction when that lost the race); the others found it started.
      const started = await other<{ before: string }[]>`
        select payload->>'planStatusBefore' as before from plan_audit_log
        where plan_id = ${planId} and event_type = 'step_started'`;
      expect(started.map((row) => row.before).sort(), `round ${round}`).toEqual([
        ...Array.from({ length: count - 1 }, () => "executing"),
        "planning",
      ]);
      expect((await getPlanStatus(ctx, { planId })).status).toBe("executing");
      await Promise.all(
        ids.map((stepId, i) =>
          submitStepResult(ctx, { planId, stepId, result: { i }, stepExecutionReport: report }),
        ),
      );
      const status = await getPlanStatus(ctx, { planId });
      expect(status.status, `round ${round}`).toBe("completed");
      expect((await getNextStep(ctx, { planId })).status).toBe("plan_complete");
    }
  });

  it("completes the last steps submitted while another call holds the plan, each reading the other's", async () => {
    // Both submits find the plan held, so each takes the plan's lock in a
    // statement of its own and submits behind it (complete-step-guarded.ts);
    // the one granted second must read the first's completion and end the plan,
    // in that one call: a submit that read the steps from before the other's
    // would take the full path, a transaction, and fail this test.
    const { planId } = await createPlan(ctx, {
      name: "Held",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "one" },
        { stepType: "search", instructions: "two" },
      ],
    });
    const handed = await Promise.all([getNextStep(ctx, { planId }), getNextStep(ctx, { planId })]);
    const ids = handed.map((answer) => (answer.status === "ready" ? answer.step.stepId : ""));
    expect(ids).not.toContain("");
    const holder = await other.reserve();
    let submits: Promise<unknown[]> | undefined;
    const transactions = vi.spyOn(ctx.db, "transaction");
    try {
      await holder`begin`;
      await holder`select id from research_plan where id = ${planId} for update`;
      submits = Promise.all(
        ids.map((stepId, i) =>
          submitStepResult(ctx, { planId, stepId, result: { i }, stepExecutionReport: report }),
        ),
      );
      submits.catch(() => {});
      await waitingForLocks(
        other,
        "lock a plan for a submit behind another call, then complete a step in one statement, the plan locked",
        2,
      );
    } finally {
      await holder`commit`;
      holder.release();
    }
    let submitted: { stepStatus: string; planStatus: string }[];
    try {
      submitted = (await submits) as typeof submitted;
      expect(transactions).not.toHaveBeenCalled();
    } finally {
      transactions.mockRestore();
    }
    expect(submitted.map((answer) => answer.stepStatus)).toEqual(["completed", "completed"]);
    expect(submitted.map((answer) => answer.planStatus).sort()).toEqual(["completed", "executing"]);
    expect((await getPlanStatus(ctx, { planId })).status).toBe("completed");
    const events = await other`select event_type, count(*)::int as n from plan_audit_log
      where plan_id = ${planId} group by event_type order by event_type`;
    expect(events.filter((row) => row.event_type === "step_completed")).toEqual([
      { event_type: "step_completed", n: 2 },
    ]);
    const completedEvents = await other`select count(*)::int as n from notification_event
      where event = 'plan.completed' and payload ->> 'planId' = ${planId}`;
    expect(completedEvents).toEqual([{ n: 1 }]);
  });

  it("writes a step's conditions' verdicts when both of its tries find the plan held", async () => {
    // The first try sends no verdicts (the engine has not seen the step's
    // conditions yet) and, behind holder A, answers them; the second, with
    // the verdicts, finds the plan held again, by holder B, queued behind the
    // first try, and goes behind B's lock in the statement that writes them
    // (complete-step-guarded.ts). No transaction either time.
    const { planId } = await createPlan(ctx, {
      name: "Held twice",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "one" },
        { stepType: "search", instructions: "two" },
        { stepType: "search", instructions: "three" },
      ],
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "confidence > 0.8",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 3 },
        },
      ],
    });
    const first = await getNextStep(ctx, { planId });
    const stepId = first.status === "ready" ? first.step.stepId : "";
    expect(stepId).not.toBe("");
    const holderA = await other.reserve();
    const second = postgres(url, { max: 1, onnotice: () => {} });
    const holderB = await second.reserve();
    const transactions = vi.spyOn(ctx.db, "transaction");
    try {
      await holderA`begin`;
      await holderA`select id from research_plan where id = ${planId} for update`;
      const submitted = submitStepResult(ctx, {
        planId,
        stepId,
        result: { found: 1 },
        confidence: 0.5,
        stepExecutionReport: report,
      });
      submitted.catch(() => {});
      await waitingForLocks(
        other,
        "lock a plan for a submit behind another call, then complete a step in one statement, the plan locked",
        1,
      );
      await holderB`begin`;
      const holderBLocked =
        holderB`/* holder B */ select id from research_plan where id = ${planId} for update`.execute();
      await waitingForLocks(other, "holder B", 1);
      await holderA`commit`;
      await holderBLocked;
      await waitingForLocks(
        other,
        "lock a plan for a submit behind another call, then complete a step and its conditions' verdicts in one statement, the plan locked",
        1,
      );
      await holderB`commit`;
      const answer = await submitted;
      expect(transactions).not.toHaveBeenCalled();
      expect(answer).toMatchObject({
        stepStatus: "completed",
        planStatus: "executing",
        firedConditions: [],
      });
    } finally {
      transactions.mockRestore();
      await holderA`rollback`.catch(() => {});
      await holderB`rollback`.catch(() => {});
      holderA.release();
      holderB.release();
      await second.end();
    }
    const conditions = await other`select fired, evaluated_at is not null as evaluated
      from plan_branching_condition where plan_id = ${planId}`;
    expect(conditions).toEqual([{ fired: false, evaluated: true }]);
    const next = await getNextStep(ctx, { planId });
    expect(next.status === "ready" ? next.step.stepOrder : null).toBe(2);
  });
});
