/**
 * The plan page's "Arguments Cairn ran it with": each server step shows the
 * arguments of Cairn's latest run of it, bindings resolved, and the run's
 * audit row. The row is kept on the step when the run is written
 * (`last_run_audit_id`) and read by its key: the page once searched the
 * plan's trail backward for it, once per server step shown, so a page cost
 * more with every call made on the plan. In process, on PGlite and on
 * PostgreSQL 15, with the migration's backfill of steps run before it.
 */
import { readFileSync } from "node:fs";
import { and, asc, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog, planSteps } from "@/lib/db/schema";
import { getPlanPage, planPageStepsOrder, shownStepsOf } from "@/lib/services/views/plan-page";
import { BACKENDS } from "../support/databases";
import { genericPlanOf } from "../support/generic-plan";
import { extractStep, signedInAdmin, useFreshTenant } from "../support/in-process";

/** Migration 0039's backfill: the statement after its column's. */
const BACKFILL = readFileSync("drizzle/0039_server_step_last_run.sql", "utf8").split(
  "--> statement-breakpoint",
)[1];
if (!BACKFILL) throw new Error("migration 0039 has no backfill after its column");

describe.each(BACKENDS)("the arguments a server step ran with, on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("shows each server step's latest run, read by its key, after reruns and after the backfill", async () => {
    const { agent, handle } = tenant;
    const viewer = await signedInAdmin(handle.db, agent.ctx);
    const { planId } = await agent.ok("create_research_plan", {
      name: "Runs",
      researchQuestion: "Heat pumps in cold climates",
      steps: [
        {
          stepType: "search",
          instructions: "Prior research.",
          tool: "search_sources",
          arguments: { query: "{{plan.researchQuestion}}", limit: 5 },
        },
        extractStep,
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    // Step 1 runs; step 2 fails (no model here) and pauses the plan. Two
    // retries run it twice more, each a step_started row of its own.
    const paused = await agent.ok("get_next_step", { planId });
    expect(paused.pauseReason).toMatchObject({ type: "tool_error", stepOrder: 2 });
    for (let retry = 0; retry < 2; retry++) {
      await agent.ok("modify_plan", {
        planId,
        action: "retry_step",
        stepId: paused.pauseReason.stepId,
        modificationRationale: "Try the extraction again.",
      });
      const again = await agent.ok("get_next_step", { planId });
      expect(again.pauseReason).toMatchObject({ type: "tool_error", stepOrder: 2 });
    }

    const runs = await handle.db
      .select({ id: planAuditLog.id, stepId: planAuditLog.stepId })
      .from(planAuditLog)
      .where(
        and(
          eq(planAuditLog.planId, planId),
          eq(planAuditLog.eventType, "step_started"),
          eq(planAuditLog.actorType, "system"),
        ),
      )
      .orderBy(asc(planAuditLog.chainIndex));
    const latestRun = new Map(runs.map((run) => [run.stepId, run.id]));
    expect(runs).toHaveLength(4);

    const shown = async () => {
      const page = await getPlanPage(viewer, planId);
      return new Map(page?.stepsPage.steps.map((step) => [step.stepOrder, step]));
    };
    const expectLatestRuns = async () => {
      const steps = await shown();
      const [search, extract, synthesize] = [steps.get(1), steps.get(2), steps.get(3)];
      expect(search?.ranWith?.auditId).toBe(latestRun.get(search?.stepId ?? ""));
      expect(search?.ranWith?.arguments.text).toContain('"query": "Heat pumps in cold climates"');
      expect(extract?.ranWith?.auditId).toBe(runs[3]?.id);
      expect(extract?.ranWith?.arguments.text).toContain("A heat pump costs 9000 euros.");
      // An agent's step: Cairn never ran it.
      expect(synthesize?.ranWith).toBeNull();
    };
    await expectLatestRuns();

    // The read goes to the run's row by its key, never through the plan's
    // trail in its chain's order, whose length grows with every call.
    const lines = await genericPlanOf(
      handle.db,
      shownStepsOf(viewer, planId, planPageStepsOrder()),
      { seqScans: false },
    );
    expect(lines).toContain("plan_audit_log_pkey");
    expect(lines).not.toContain("plan_audit_log_plan_chain_uq");
    // Nor does a step's withdrawn flag read every team's reviews.
    expect(lines).toContain("review_request_step_idx");
    expect(lines).not.toMatch(/Seq Scan on review_request/);

    // Steps run before the column existed get their latest run from the trail, once.
    await handle.db
      .update(planSteps)
      .set({ lastRunAuditId: null })
      .where(eq(planSteps.planId, planId));
    expect([...(await shown()).values()].map((step) => step.ranWith)).toEqual([null, null, null]);
    await handle.db.execute(sql.raw(BACKFILL));
    await expectLatestRuns();
  });
});
