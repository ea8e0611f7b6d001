/**
 * A step of a long plan costs what a step of a short one costs: get_next_step
 * and submit_step_result read the same few of the plan's step rows and index
 * entries at its last step as at its second (docs/performance.md, "A long
 * plan's steps"). Before, the claim counted every step of the plan and took
 * every pending and handed-out step to find the first free one, the submit
 * read every other step to decide the plan's next status, and the submit's
 * lookup of its step by id was served from the plan's (plan_id, step_order)
 * index, reading every step of the plan: a plan of n steps read on the order
 * of n² step rows. In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Database } from "@/lib/db/client";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

const STEPS = 150;

describe.each(BACKENDS)("a step late in a long plan on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("reads as few of the plan's steps as a step early on", async () => {
    const { agent } = tenant;
    const { planId } = await agent.ok("create_research_plan", {
      name: "Long",
      researchQuestion: "q",
      steps: planSteps(...Array.from({ length: STEPS }, () => "search")),
    });

    /**
     * One step handed out and completed inside a transaction of its own, and
     * the plan_step rows and index entries the transaction read: the
     * backend's counts, which may still hold earlier transactions' not yet
     * sent to the statistics, so the difference is this transaction's.
     */
    async function measuredStep(): Promise<{ order: number; total: number; reads: number }> {
      return tenant.handle.db.transaction(async (tx) => {
        const read = async () =>
          (
            await readRows<{ n: number }>(
              tx,
              sql`select (pg_stat_get_xact_tuples_returned('plan_step'::regclass)
                  + coalesce(sum(pg_stat_get_xact_tuples_returned(indexrelid)), 0))::int as n
                from pg_index where indrelid = 'plan_step'::regclass`,
            )
          )[0]?.n ?? 0;
        const before = await read();
        const inTx = inProcessAgent({ ...agent.ctx, db: tx as unknown as Database });
        const next = await inTx.ok("get_next_step", { planId });
        if (next.status !== "ready") throw new Error(`No step handed out: ${next.status}`);
        await inTx.submit(planId, next.step.stepId);
        return {
          order: next.step.stepOrder,
          total: next.totalSteps ?? 0,
          reads: (await read()) - before,
        };
      });
    }

    const first = await agent.ok("get_next_step", { planId });
    if (first.status !== "ready") throw new Error(`No first step: ${first.status}`);
    await agent.submit(planId, first.step.stepId);
    const early = await measuredStep();
    for (let order = 3; order < STEPS; order += 1) {
      const next = await agent.ok("get_next_step", { planId });
      if (next.status !== "ready") throw new Error(`Step ${order} not handed out: ${next.status}`);
      await agent.submit(planId, next.step.stepId);
    }
    const late = await measuredStep();

    expect([early.order, early.total, late.order, late.total]).toEqual([2, STEPS, STEPS, STEPS]);
    // A handful either way (7 or 8 here); the count of the plan's steps alone read 150.
    expect(early.reads).toBeLessThan(20);
    expect(late.reads).toBeLessThanOrEqual(early.reads + 5);
    const status = await agent.ok("get_plan_status", { planId });
    expect(status.status).toBe("completed");
  });
});
