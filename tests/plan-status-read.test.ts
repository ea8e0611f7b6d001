/**
 * get_plan_status's read of a plan's steps (lib/services/loop/read-plan-status.ts),
 * on PGlite and PostgreSQL 15: a plan's steps come from the plan-order index
 * alone (drizzle/0043_steps_status_in_plan_order_index.sql), since their rows
 * lie a page each once updated and a large database holds few of those pages
 * in its buffers; only a step in progress is read from its row, for the times
 * a stall warning measures. Run as the statement's generic plan, which the
 * loop's prepared statements keep.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { readPlanStatus, readStatus } from "@/lib/services/loop/read-plan-status";
import { BACKENDS } from "./support/databases";
import { genericPlan } from "./support/generic-plan";
import { planSteps, useFreshTenant } from "./support/in-process";

/**
 * The lines under the one plan node `node` matches (its conditions, its
 * counts), up to its first child or the next node: "" when none matches.
 */
function nodeDetails(plan: string, node: RegExp): string {
  const lines = plan.split("\n");
  const at = lines.findIndex((line) => node.test(line));
  if (at < 0) return "";
  const indent = (line: string) => line.length - line.trimStart().length;
  const own = indent(lines[at] ?? "");
  const details: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (indent(line) <= own || line.trimStart().startsWith("->")) break;
    details.push(line);
  }
  return details.join("\n");
}

describe.each(BACKENDS)("get_plan_status's read of a plan's steps on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("reads a plan's steps from the plan-order index alone, and a step in progress from its row too", async () => {
    const { agent, handle } = tenant;
    const created = await agent.ok("create_research_plan", {
      name: "Three steps",
      researchQuestion: "q",
      steps: planSteps("search", "analyze", "synthesize"),
    });
    const planId: string = created.planId;
    const first = await agent.ok("get_next_step", { planId });
    await agent.submit(planId, first.step.stepId);
    const second = await agent.ok("get_next_step", { planId });
    // What autovacuum does to the pages of rows no transaction still needs to
    // see in an earlier version: marks them visible to all, so an index-only
    // scan need not read them.
    await handle.db.execute(sql`vacuum analyze plan_step`);

    const read = await readPlanStatus(handle.db, agent.ctx, planId);
    expect(
      read?.steps.map((step) => ({
        status: step.status,
        startedAt: step.startedAt !== null,
        leaseExpiresAt: step.leaseExpiresAt?.toISOString() ?? null,
        updatedAt: step.updatedAt !== null,
      })),
    ).toEqual([
      { status: "completed", startedAt: false, leaseExpiresAt: null, updatedAt: false },
      {
        status: "in_progress",
        startedAt: true,
        leaseExpiresAt: new Date(second.step.leaseExpiresAt).toISOString(),
        updatedAt: true,
      },
      { status: "pending", startedAt: false, leaseExpiresAt: null, updatedAt: false },
    ]);

    const lines = await genericPlan(handle.db, readStatus.text, [planId, agent.ctx.tenantId], {
      seqScans: false,
      analyze: true,
    });
    // The three steps from the index, none of their rows read from the table;
    // the one in progress by its key, once.
    const stepsScan =
      /Index Only Scan using plan_step_plan_order_idx on plan_step s \(actual rows=3(?:\.00)? loops=1\)/;
    expect(lines).toMatch(stepsScan);
    expect(nodeDetails(lines, stepsScan)).toMatch(/Heap Fetches: 0\b/);
    expect(lines).toMatch(
      /Index Scan using plan_step_pkey on plan_step x \(actual rows=1(?:\.00)? loops=1\)/,
    );
  });
});
