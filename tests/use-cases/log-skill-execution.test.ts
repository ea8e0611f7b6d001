/**
 * log_skill_execution: the tracking record is created with the router's
 * metadata, linked to the plan created with the same session (which moves it to
 * executing), and closed; a closed record takes no further status.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

const ROUTED = {
  topic: "Heat pumps",
  researchType: "general_topic",
  scope: "Cold climates",
  depthSignals: [],
  routingRationale: "A quick overview was asked for.",
  delegatedTo: "scan",
  originalQuery: "Do heat pumps work in cold climates?",
  skipQuestionsReason: "The request was clear.",
};

describe.each(BACKENDS)("log_skill_execution on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("refuses to create a record without the routing metadata, naming what is missing", async () => {
    const text = await tenant.agent.fails("log_skill_execution", {
      skillName: "research",
      status: "started",
      sessionId: "s-missing",
      metadata: { topic: "Heat pumps" },
    });
    expect(text).toMatch(/^VALIDATION_ERROR: /);
    expect(text).toContain("metadata.routingRationale");
    expect(text).toContain("metadata.clarifyingQuestions or metadata.skipQuestionsReason");
    expect(text).not.toContain("metadata.topic");
  });

  it("follows the plan of its session to the end, then takes no further status", async () => {
    const { agent } = tenant;
    const created = await agent.ok("log_skill_execution", {
      skillName: "research",
      status: "started",
      sessionId: "s-linked",
      metadata: ROUTED,
    });
    expect(created).toMatchObject({ status: "started", planId: null });

    const plan = await agent.ok("create_research_plan", {
      name: "Tracked",
      researchQuestion: "q",
      steps: planSteps("search"),
      planDesignRationale: "Scan first.",
      sessionId: "s-linked",
    });
    expect(plan.linkedExecutionId).toBe(created.executionId);
    // The record keeps the router's metadata with the plan's rationale added,
    // and the plan's created row names the record it linked.
    const [record] = await readRows<{ planId: string; metadata: Record<string, unknown> }>(
      tenant.handle.db,
      sql`select plan_id as "planId", metadata from skill_execution where id = ${created.executionId}`,
    );
    expect(record).toEqual({
      planId: plan.planId,
      metadata: { ...ROUTED, planDesignRationale: "Scan first." },
    });
    const [row] = await readRows<{ payload: Record<string, unknown> }>(
      tenant.handle.db,
      sql`select payload from plan_audit_log where plan_id = ${plan.planId}
        and event_type = 'plan_modified'`,
    );
    expect(row?.payload).toEqual({
      action: "created",
      stepCount: 1,
      conditionCount: 0,
      sessionId: "s-linked",
      linkedExecutionId: created.executionId,
    });
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.skillExecution).toMatchObject({
      executionId: created.executionId,
      status: "executing",
    });

    const closed = await agent.ok("log_skill_execution", {
      executionId: created.executionId,
      skillName: "research",
      status: "completed",
    });
    expect(closed).toMatchObject({ status: "completed", planId: plan.planId });
    expect(
      await agent.fails("log_skill_execution", {
        executionId: created.executionId,
        skillName: "research",
        status: "executing",
      }),
    ).toMatch(/^INVALID_TRANSITION: /);
  });
});
