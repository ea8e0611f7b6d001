/**
 * A plan's creation and its first get_next_step, counted in statements on
 * PostgreSQL 15 (the driver's query hook exists only there):
 * create_research_plan is one statement, its first revision included
 * (lib/services/plans/create-plan.ts), and so is the get_next_step that finds
 * the plan complete (the claim reads its answer); a submit after which a
 * branching condition fires no action that changes the plan is two
 * (lib/services/loop/complete-step-guarded.ts); a plan whose first step is the
 * agent's is started with that step's claim in one statement after the claim
 * that found it `planning` (lib/services/loop/claim-next-step.ts); a plan whose
 * first step Cairn runs itself still takes get_next_step's transaction, which
 * runs it.
 */

import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import type { ServiceContext } from "@/lib/services/shared/context";
import { createPostgresDatabase } from "./support/databases";
import { tenantContext } from "./support/in-process";
import { plainResult } from "./support/mcp-client";
import { readRows } from "./support/rows";

describe("a plan's first get_next_step on postgres", () => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;
  let sent: string[] = [];

  beforeAll(async () => {
    handle = await openDatabase({
      kind: "postgres",
      url: await createPostgresDatabase(),
      onQuery: (query) => {
        sent.push(query);
      },
    });
    await handle.migrate();
    ctx = await tenantContext(handle.db, "First");
  });
  afterAll(async () => {
    await handle?.close();
  });

  /** get_next_step, and the statements it sent. */
  async function counted(planId: string) {
    sent = [];
    const answer = await getNextStep(ctx, { planId });
    return { answer, statements: sent };
  }

  it("creates a plan, its revision and audit row in one statement", async () => {
    sent = [];
    const { planId } = await createPlan(ctx, {
      name: "One statement",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Search." },
        { stepType: "analyze", instructions: "Analyse." },
      ],
      branchingConditions: [
        { afterStepOrder: 1, conditionExpression: "confidence < 0.1", ifTrueAction: "fail" },
      ],
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(
      /^\/\* create a plan with its steps, conditions, link, audit row and first revision \*\//,
    );
    const [written] = await readRows<{ revisions: number; audits: number }>(
      handle.db,
      sql`select (select count(*)::int from plan_revision where plan_id = ${planId}) as revisions,
        (select count(*)::int from plan_audit_log where plan_id = ${planId}) as audits`,
    );
    expect(written).toEqual({ revisions: 1, audits: 1 });
  });

  it("starts a plan whose first step is the agent's in two statements", async () => {
    const { planId, steps } = await createPlan(ctx, {
      name: "Agent first",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Search." },
        { stepType: "analyze", instructions: "Analyse." },
      ],
    });
    const { answer, statements } = await counted(planId);
    expect(answer).toMatchObject({
      status: "ready",
      planStatus: "executing",
      step: { stepId: steps[0]?.stepId, stepOrder: 1, attempt: 1 },
    });
    expect(statements).toHaveLength(2);
    expect(statements[1]).toMatch(/^\/\* start a planning plan with its first step's claim \*\//);
    expect((await getPlanStatus(ctx, { planId })).status).toBe("executing");
    // The next pull is the one-statement claim on the executing plan.
    const second = await counted(planId);
    expect(second.answer).toMatchObject({ status: "ready", step: { stepOrder: 2 } });
    expect(second.statements).toHaveLength(1);
  });

  it("runs a first step Cairn runs itself in get_next_step's transaction, as before", async () => {
    const { planId, steps } = await createPlan(ctx, {
      name: "Server first",
      researchQuestion: "heat pumps",
      steps: [
        {
          stepType: "search",
          instructions: "Find what we have.",
          tool: "search_sources",
          arguments: { query: "{{plan.researchQuestion}}", limit: 5 },
        },
        { stepType: "analyze", instructions: "Analyse what was found." },
      ],
    });
    const { answer, statements } = await counted(planId);
    expect(answer).toMatchObject({
      status: "ready",
      planStatus: "executing",
      step: { stepId: steps[1]?.stepId, stepOrder: 2 },
      serverSteps: [{ stepOrder: 1, status: "completed" }],
    });
    // The start statement changed nothing, and the transaction ran the step.
    expect(statements[1]).toMatch(/^\/\* start a planning plan/);
    expect(statements).toContainEqual(expect.stringMatching(/^begin/));
    expect(statements.length).toBeGreaterThan(4);
  });

  it("answers a completed plan in the claim's one statement, with its formatting notes", async () => {
    const { planId, steps } = await createPlan(ctx, {
      name: "Complete",
      researchQuestion: "q",
      outputFormattingNotes: "A memo.",
      steps: [
        { stepType: "search", instructions: "Search." },
        { stepType: "analyze", instructions: "Analyse." },
      ],
    });
    for (const step of steps) {
      await getNextStep(ctx, { planId });
      await submitStepResult(
        ctx,
        plainResult(planId, step.stepId, { outputFormattingNotes: `Notes of ${step.stepOrder}.` }),
      );
    }
    const { answer, statements } = await counted(planId);
    expect(answer).toEqual({
      status: "plan_complete",
      planId,
      outputMediaType: null,
      outputFormattingInstructions: null,
      planFormattingNotes: "A memo.",
      stepFormattingNotes: steps.map((step) => ({
        stepId: step.stepId,
        stepOrder: step.stepOrder,
        notes: `Notes of ${step.stepOrder}.`,
      })),
      hint: expect.stringMatching(/^Every step is done\. Call get_research_context/),
    });
    expect(statements).toHaveLength(1);
  });

  it("submits a step whose condition changes nothing in two statements, and one that fails the plan on its snapshot", async () => {
    const planWith = (action: "continue" | "fail") =>
      createPlan(ctx, {
        name: `Condition ${action}`,
        researchQuestion: "q",
        steps: [
          { stepType: "search", instructions: "Search." },
          { stepType: "analyze", instructions: "Analyse." },
        ],
        branchingConditions: [
          { afterStepOrder: 1, conditionExpression: "confidence > 0.5", ifTrueAction: action },
        ],
      });
    const submitted = async (planId: string, stepId: string) => {
      await getNextStep(ctx, { planId });
      sent = [];
      const answer = await submitStepResult(ctx, plainResult(planId, stepId, { confidence: 0.9 }));
      return { answer, statements: sent };
    };

    const going = await planWith("continue");
    const [condition] = going.branchingConditions;
    const step = going.steps[0]?.stepId as string;
    const continued = await submitted(going.planId, step);
    expect(continued.answer).toMatchObject({
      stepStatus: "completed",
      planStatus: "executing",
      conditionsEvaluated: 1,
      firedConditions: [
        {
          conditionId: condition?.conditionId,
          conditionExpression: "confidence > 0.5",
          action: "continue",
        },
      ],
    });
    expect(continued.statements).toHaveLength(2);
    expect(continued.statements.every((text) => text.startsWith("/* complete a step"))).toBe(true);
    const [verdict] = await readRows<{ fired: boolean; evaluated: boolean }>(
      handle.db,
      sql`select fired, evaluated_at is not null as evaluated
        from plan_branching_condition where id = ${condition?.conditionId}`,
    );
    expect(verdict).toEqual({ fired: true, evaluated: true });

    const failing = await planWith("fail");
    const failed = await submitted(failing.planId, failing.steps[0]?.stepId as string);
    expect(failed.answer).toMatchObject({
      planStatus: "failed",
      firedConditions: [{ action: "fail" }],
    });
    // The engine decided on the plan's locked snapshot, in a transaction.
    expect(failed.statements).toContainEqual(expect.stringMatching(/^begin/));
  });
});
