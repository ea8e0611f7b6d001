/**
 * The plan page and the inbox read only what they show (issue 40): bounded in
 * what the server reads from the database, not only in what it sends. A plan
 * of the most steps, each holding every long value at its limit, and a page of
 * its trail of the largest payloads (about 165 MB in all), and 21 plans waiting on the longest proposals: one render of the
 * plan page or of its next steps reads under 2 MB (about 1.5 MB), one of the
 * inbox under 256 KB (about 100 KB), counted as the bytes the database sends (tests/support/metered-database.ts),
 * on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_RESOLVED_BYTES } from "@/lib/plan-engine/bindings";
import { USER_FEEDBACK_MARK } from "@/lib/plan-engine/decisions";
import { MAX_PLAN_STEPS } from "@/lib/plan-engine/modify";
import { MAX_REVIEWS_PER_STEP } from "@/lib/services/reviews/review-limits";
import type { ServiceContext } from "@/lib/services/shared/context";
import {
  MAX_REPORT_LIST_BYTES,
  MAX_RESULT_BYTES,
  MAX_STEP_IO_BYTES,
} from "@/lib/services/shared/fields";
import { AUDIT_PAGE_SIZE, getPlanPage, PLAN_PAGE_STEP_ROWS } from "@/lib/services/views/plan-page";
import { INBOX_PAGE_SIZE, listInbox } from "@/lib/services/views/review-inbox";
import { BACKENDS } from "./support/databases";
import { inProcessAgent, planSteps, signedInAdmin, tenantContext } from "./support/in-process";
import { bytesDuring, type MeteredDatabase, meteredDatabase } from "./support/metered-database";

const MB = 1024 * 1024;

/**
 * The most one render may read: a page of steps (PLAN_PAGE_STEP_ROWS and one
 * more, each long value cut to 2,000 characters, every feedback of a step
 * too), the pending review with each field of its proposal cut, a page of the
 * trail with each payload cut, a page of each other list. The plan holds about
 * 165 MB.
 */
const RENDER_BYTES = 2 * MB;
/** The inbox: a page of reviews, each summary, instructions and proposal cut in the database. */
const INBOX_BYTES = MB / 4;

/** A JSON object whose text is about `bytes` long: one field of plain letters. */
const jsonOf = (bytes: number) => sql`jsonb_build_object('text', repeat('x', ${bytes - 20}))`;

describe.each(BACKENDS)("what the plan page and the inbox read on %s", (backend) => {
  let metered: MeteredDatabase;
  let viewer: ServiceContext;
  let planId: string;

  beforeAll(async () => {
    metered = await meteredDatabase(backend);
    const ctx = await tenantContext(metered.db, "Alpha");
    const agent = inProcessAgent(ctx);
    viewer = await signedInAdmin(metered.db, ctx);
    const created = await agent.ok("create_research_plan", {
      name: "Full of steps",
      researchQuestion: "How much can one plan hold?",
      steps: planSteps(...Array.from({ length: MAX_PLAN_STEPS }, () => "analyze")),
    });
    planId = created.planId;
    const first = await agent.ok("get_next_step", { planId });
    await agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "x".repeat(10_000),
      proposedResult: { text: "x".repeat(MAX_RESULT_BYTES - 20) },
    });
    // Every step's long values at their limits, written as the tools would
    // leave them after 20 reviews each sent back with the longest feedback:
    // instructions, result, summary, failure, the report, inputs, arguments, schema.
    await metered.db.execute(sql`update plan_step set
        instructions = repeat('x', 20000)
          || repeat(${USER_FEEDBACK_MARK} || repeat('x', 20000), ${MAX_REVIEWS_PER_STEP}),
        result = ${jsonOf(MAX_RESULT_BYTES)},
        result_summary = repeat('x', 10000),
        failure_reason = repeat('x', 20000),
        step_execution_report = jsonb_build_object('thinking', repeat('x', 200000),
          'webSearches', jsonb_build_array(repeat('x', ${MAX_REPORT_LIST_BYTES - 10})),
          'webFetches', jsonb_build_array(repeat('x', ${MAX_REPORT_LIST_BYTES - 10})),
          'otherToolCalls', jsonb_build_array(repeat('x', ${MAX_REPORT_LIST_BYTES - 10})),
          'subagents', jsonb_build_array(repeat('x', ${MAX_REPORT_LIST_BYTES - 10}))),
        inputs = ${jsonOf(MAX_STEP_IO_BYTES)},
        arguments = ${jsonOf(MAX_STEP_IO_BYTES)},
        output_schema = ${jsonOf(MAX_STEP_IO_BYTES)}
      where plan_id = ${planId}::uuid and step_order > 1`);
    // A page of the trail of server-step runs, each with resolved arguments at
    // their limit, as Cairn writes them when it runs a step.
    await metered.db.execute(sql`insert into plan_audit_log
        (tenant_id, plan_id, step_id, event_type, actor_type, actor_label, payload)
      select ${ctx.tenantId}::uuid, ${planId}::uuid, step.id, 'step_started', 'system', 'Cairn',
          jsonb_build_object('stepOrder', step.step_order, 'tool', 'search_sources',
            'arguments', jsonb_build_object('query', repeat('x', ${MAX_RESOLVED_BYTES - 20})))
        from plan_step step
        where step.plan_id = ${planId}::uuid and step.step_order <= ${AUDIT_PAGE_SIZE + 1}
        order by step.step_order`);
    // The inbox: more plans than a page, each waiting on the longest proposal.
    for (let i = 0; i <= INBOX_PAGE_SIZE; i++) {
      const waiting = await agent.ok("create_research_plan", {
        name: `Waiting ${i}`,
        researchQuestion: "q",
        steps: planSteps("analyze"),
      });
      const step = await agent.ok("get_next_step", { planId: waiting.planId });
      await agent.ok("request_user_review", {
        planId: waiting.planId,
        stepId: step.step.stepId,
        summary: "x".repeat(10_000),
        proposedResult: { text: "x".repeat(MAX_RESULT_BYTES - 20) },
      });
    }
  }, 600_000);
  afterAll(async () => {
    await metered?.close();
  });

  it("renders the plan page, and its next page of steps, reading under 2 MB of a plan of 160 MB", async () => {
    let nextCursor: string | null = null;
    const first = await bytesDuring(metered, async () => {
      const page = await getPlanPage(viewer, planId);
      if (!page) throw new Error("no plan page");
      await page.trail;
      expect(page.steps).toHaveLength(MAX_PLAN_STEPS);
      expect(page.stepsPage.steps.length).toBeLessThanOrEqual(PLAN_PAGE_STEP_ROWS);
      nextCursor = page.stepsPage.nextCursor;
    });
    expect(first).toBeLessThan(RENDER_BYTES);
    expect(nextCursor).toEqual(expect.any(String));
    const next = await bytesDuring(metered, async () => {
      const page = await getPlanPage(viewer, planId, undefined, {
        stepsCursor: nextCursor ?? undefined,
      });
      await page?.trail;
      // A step at its limits shows its instructions and every feedback, each shortened.
      expect(page?.stepsPage.steps[0]?.instructions).toHaveLength(MAX_REVIEWS_PER_STEP + 1);
    });
    expect(next).toBeLessThan(RENDER_BYTES);
  });

  it("renders a page of the inbox reading under 256 KB of reviews with proposals of 128 KB each", async () => {
    const read = await bytesDuring(metered, async () => {
      const inbox = await listInbox(viewer, { role: "admin" });
      // The plan of many steps waits too.
      expect(inbox.total).toBe(INBOX_PAGE_SIZE + 2);
      expect(inbox.nextCursor).toEqual(expect.any(String));
    });
    expect(read).toBeLessThan(INBOX_BYTES);
  });
});
