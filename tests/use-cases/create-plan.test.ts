/**
 * create_research_plan refuses bad step references and unparseable conditions,
 * writing nothing; it answers the stored plan, and writes the plan's first
 * revision in its one statement as any other change records one.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Executor } from "@/lib/db/client";
import { DIFF_VALUE_CHARS } from "@/lib/plan-engine/revisions";
import { recordRevision } from "@/lib/services/shared/revisions";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

/** Thrown to roll a transaction back once it has read what it wrote. */
class Rollback extends Error {
  constructor(readonly read: unknown) {
    super("rolled back");
  }
}

/** A plan's revisions and step definitions, as written (no ids or times). */
async function revisionRecords(db: Executor, planId: string) {
  return {
    revisions: await readRows(
      db,
      sql`select revision, cause, rationale, actor_type, actor_id, actor_label, steps, diff
        from plan_revision where plan_id = ${planId} order by revision`,
    ),
    definitions: await readRows(
      db,
      sql`select digest, definition from plan_step_definition
        where plan_id = ${planId} order by digest`,
    ),
  };
}

describe.each(BACKENDS)("create_research_plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("rejects bad references and unparseable conditions at creation, writing nothing", async () => {
    const before = (await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length;
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search"),
        branchingConditions: [
          { afterStepOrder: 2, conditionExpression: "confidence > 1", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: branchingConditions\[0\]\.afterStepOrder is 2/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "skip_to",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_CONDITION: .*no comparison operator/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "confidence > 0.5",
            ifTrueAction: "skip_to",
            actionParams: { targetStepOrder: 9 },
          },
        ],
      }),
    ).toMatch(/^INVALID_STEP_REFERENCE: .*targetStepOrder is 9/);
    expect((await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length).toBe(before);
  });

  it("refuses a gate that could never fire, and a field it does not know, naming what was meant", async () => {
    const before = (await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length;
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search", "analyze"),
        branchingConditions: [
          { afterStepOrder: 1, conditionExpression: "score >= 80", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(/^INVALID_CONDITION: .*"score >= 80" would never fire.*Did you mean result\.score\?/);
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "x",
        researchQuestion: "q",
        steps: planSteps("search"),
        branchingCondition: [
          { afterStepOrder: 1, conditionExpression: "confidence > 0.5", ifTrueAction: "fail" },
        ],
      }),
    ).toMatch(
      /^VALIDATION_ERROR: Unknown field branchingCondition \(did you mean branchingConditions\?\)/,
    );
    expect(
      await tenant.agent.fails("request_user_review", {
        planId: "00000000-0000-4000-8000-000000000000",
        stepId: "00000000-0000-4000-8000-000000000000",
        summary: "s",
        reviewNote: "unknown",
      }),
    ).toMatch(/^VALIDATION_ERROR: Unknown field.* reviewNote/);
    expect((await tenant.agent.ok("list_active_plans", { limit: 100 })).plans.length).toBe(before);
  });
  it("answers the stored plan: its steps in order and each condition with the step it follows and targets", async () => {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Answer",
      researchQuestion: "q",
      steps: planSteps("search", "extract", "analyze", "synthesize"),
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 2",
          ifTrueAction: "skip_to",
          actionParams: { targetStepOrder: 4 },
        },
        {
          afterStepOrder: 3,
          conditionExpression: "confidence < 0.2",
          ifTrueAction: "fail",
          actionParams: { reason: "Too unsure." },
        },
      ],
    });
    const stepIds = created.steps.map((step: { stepId: string }) => step.stepId);
    expect(new Set(stepIds).size).toBe(4);
    expect(created).toMatchObject({
      status: "planning",
      steps: [
        { stepOrder: 1, stepType: "search" },
        { stepOrder: 2, stepType: "extract" },
        { stepOrder: 3, stepType: "analyze" },
        { stepOrder: 4, stepType: "synthesize" },
      ],
      firstStep: {
        stepId: stepIds[0],
        stepOrder: 1,
        stepType: "search",
        instructions: "Step 1: do the search work.",
      },
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 2",
          ifTrueAction: "skip_to",
          // The target is stored as its step's id, beside the order given.
          actionParams: { targetStepOrder: 4, stepId: stepIds[3] },
        },
        {
          afterStepOrder: 3,
          conditionExpression: "confidence < 0.2",
          ifTrueAction: "fail",
          actionParams: { reason: "Too unsure." },
        },
      ],
    });
    expect(created.branchingConditions[1].actionParams).not.toHaveProperty("stepId");
    // The skip fires on the stored target: step 1's result skips to step 4.
    const one = await tenant.agent.ok("get_next_step", { planId: created.planId });
    await tenant.agent.submit(created.planId, one.step.stepId, { result: { sourceCount: 1 } });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    expect(next.step).toMatchObject({ stepId: stepIds[3], stepOrder: 4 });
  });

  it("writes the plan's first revision in its statement, as recordRevision records a change", async () => {
    const long = "Read every source, and note who paid for it. ".repeat(12);
    expect(long.length).toBeGreaterThan(DIFF_VALUE_CHARS);
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Revision",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: long },
        { stepType: "analyze", instructions: "Compare." },
        // The same definition twice is kept once.
        { stepType: "analyze", instructions: "Compare." },
      ],
    });
    const planId = created.planId as string;
    const stepIds = created.steps.map((step: { stepId: string }) => step.stepId);
    const db = tenant.handle.db;
    const written = await revisionRecords(db, planId);
    expect(written.definitions).toHaveLength(2);
    expect(written.revisions).toMatchObject([
      {
        revision: 1,
        cause: "created",
        rationale: null,
        diff: {
          added: [
            {
              stepId: stepIds[0],
              stepOrder: 1,
              stepType: "search",
              instructions: { text: long.slice(0, DIFF_VALUE_CHARS), cut: true },
            },
            { stepId: stepIds[1], stepOrder: 2, instructions: { text: "Compare.", cut: false } },
            { stepId: stepIds[2], stepOrder: 3, instructions: { text: "Compare.", cut: false } },
          ],
        },
      },
    ]);
    // What the shared mechanism writes for the same change, from the stored
    // steps: the same revision and definitions, to the byte.
    const recorded = await db
      .transaction(async (tx) => {
        await tx.execute(sql`delete from plan_revision where plan_id = ${planId}`);
        await tx.execute(sql`delete from plan_step_definition where plan_id = ${planId}`);
        await recordRevision(tx, tenant.agent.ctx, [
          {
            eventType: "plan_modified",
            planId,
            payload: {
              action: "created",
              stepCount: 3,
              conditionCount: 0,
              sessionId: null,
              linkedExecutionId: null,
            },
          },
        ]);
        throw new Rollback(await revisionRecords(tx, planId));
      })
      .catch((error: unknown) => {
        if (error instanceof Rollback) return error.read;
        throw error;
      });
    expect(written).toEqual(recorded);
  });
});
