/**
 * The web pages' lists that page (docs/web.md, "Lists that page"): the plans
 * list, a plan's audit trail, the library's artifacts, the admin's stalled
 * plans and tool-call log, each read by cursor with its filters. Page by page, no row is skipped or
 * repeated even when rows are added between pages; a cursor a list did not give
 * (list_active_plans' for the plans list, which reads the same plans in the
 * same order, and the other way round) is a VALIDATION_ERROR the page answers
 * with a link to its first page. In
 * process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { mcpToolCallLog } from "@/lib/db/schema";
import type { ServiceContext } from "@/lib/services/shared/context";
import { isCursorRefused } from "@/lib/services/shared/pagination";
import { ARTIFACT_PAGE_SIZE, listArtifacts } from "@/lib/services/views/library-views";
import { AUDIT_PAGE_SIZE, getPlanPage } from "@/lib/services/views/plan-page";
import { listPlans } from "@/lib/services/views/plans-list";
import { listStalledPlans } from "@/lib/services/views/stalled-plans";
import { getToolCallLog } from "@/lib/services/views/tool-calls";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";
import { readRows } from "../support/rows";

type Page<Row> = { rows: Row[]; nextCursor: string | null };

/**
 * Rows written one after the other, apart in time: PGlite's clock can give two
 * quick writes the same instant, and a list orders ties by id, not by when
 * they were written, while these tests expect the order they were written in.
 */
const apartInTime = () => new Promise((resolve) => setTimeout(resolve, 2));

/**
 * Every row of a list, page by page from the first: `between` runs once,
 * after the first page (rows added meanwhile).
 */
async function readAll<Row>(
  read: (cursor: string | undefined) => Promise<Page<Row>>,
  between: () => Promise<unknown>,
): Promise<{ first: Row[]; all: Row[] }> {
  const first = await read(undefined);
  expect(first.nextCursor).toEqual(expect.any(String));
  await between();
  const all = [...first.rows];
  for (let cursor = first.nextCursor; cursor; ) {
    const page = await read(cursor);
    all.push(...page.rows);
    cursor = page.nextCursor;
  }
  return { first: first.rows, all };
}

/** The error a read throws; fails when it succeeds. */
async function refusal(read: () => Promise<unknown>): Promise<unknown> {
  return read().then(
    () => expect.fail("the cursor should have been refused"),
    (error: unknown) => error,
  );
}

describe.each(BACKENDS)("the pages' paged lists on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /** A tenant of its own, so each list holds only the test's rows. */
  const freshAgent = async (name: string) =>
    inProcessAgent(await tenantContext(tenant.handle.db, name));

  const createPlan = (ctx: ServiceContext, name: string) =>
    inProcessAgent(ctx).ok("create_research_plan", {
      name,
      researchQuestion: `${name}?`,
      steps: planSteps("search"),
    });

  it("the plans list, filtered: each plan once, newest first, a plan added meanwhile on no later page", async () => {
    const agent = await freshAgent("Plans");
    for (const name of ["Heat 1", "Other 1", "Heat 2", "Heat 3", "Other 2", "Heat 4", "Heat 5"]) {
      await createPlan(agent.ctx, name);
      await apartInTime();
    }
    const names = (cursor: string | undefined) =>
      listPlans(agent.ctx, { filter: "active", q: "heat", pageSize: 2, cursor }).then((list) => ({
        rows: list.plans.map((p) => p.name),
        nextCursor: list.nextCursor,
      }));
    const { first, all } = await readAll(names, () => createPlan(agent.ctx, "Heat 6"));
    expect(first).toEqual(["Heat 5", "Heat 4"]);
    expect(all).toEqual(["Heat 5", "Heat 4", "Heat 3", "Heat 2", "Heat 1"]);
    expect((await names(undefined)).rows).toEqual(["Heat 6", "Heat 5"]);
  });

  it("the plans list: each plan's last activity is its trail's newest row, read with the page", async () => {
    const agent = await freshAgent("Active");
    const quiet = await createPlan(agent.ctx, "Quiet");
    const busy = await createPlan(agent.ctx, "Busy");
    await apartInTime();
    // Resuming writes a row to the trail and leaves the plan's row as it was.
    await agent.ok("get_research_context", { planId: busy.planId });
    const newest = async (planId: string) =>
      (
        await readRows<{ at: string }>(
          tenant.handle.db,
          sql`select to_char(max(created_at) at time zone 'UTC',
              'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
            from plan_audit_log where plan_id = ${planId}::uuid`,
        )
      )[0]?.at;
    const listed = new Map(
      (await listPlans(agent.ctx, {})).plans.map((p) => [p.planId, p.lastActivityAt]),
    );
    expect(listed.get(busy.planId)).toBe(await newest(busy.planId));
    expect(listed.get(quiet.planId)).toBe(await newest(quiet.planId));
    expect(Date.parse(listed.get(busy.planId) ?? "")).toBeGreaterThan(
      Date.parse(listed.get(quiet.planId) ?? ""),
    );
  });

  it("a plan's audit trail: each event once, newest first, events written meanwhile on no later page", async () => {
    const agent = await freshAgent("Trail");
    const { planId } = await createPlan(agent.ctx, "Trail");
    // Each resume is one audit event: enough for two pages and a bit.
    for (let i = 0; i < AUDIT_PAGE_SIZE + 5; i += 1) {
      await agent.ok("get_research_context", { planId, artifactsLimit: 0 });
    }
    const trail = async (cursor: string | undefined) => {
      const page = await getPlanPage(agent.ctx, planId, cursor);
      if (!page) throw new Error("the plan's page is missing");
      await page.trail;
      return { rows: page.audit.entries.map((e) => e.id), nextCursor: page.audit.nextCursor };
    };
    const before = await getPlanPage(agent.ctx, planId);
    const total = before?.audit.total ?? 0;
    expect(total).toBeGreaterThan(AUDIT_PAGE_SIZE);
    const { first, all } = await readAll(trail, () =>
      agent.ok("get_research_context", { planId, artifactsLimit: 0 }),
    );
    expect(first).toHaveLength(AUDIT_PAGE_SIZE);
    expect(first).toEqual(before?.audit.entries.map((e) => e.id));
    expect(all).toHaveLength(total);
    expect(new Set(all).size).toBe(total);
  });

  it("the library: each artifact of a type once, newest first, one stored meanwhile on no later page", async () => {
    const agent = await freshAgent("Library");
    const store = (title: string, artifactType: string) =>
      agent.ok("store_research", {
        artifactType,
        title,
        content: { title },
        contentText: `The text of ${title}.`,
        confidence: 0.5,
      });
    const findings: string[] = [];
    for (let i = 0; i < ARTIFACT_PAGE_SIZE + 3; i += 1) {
      findings.unshift(`Finding ${i}`);
      await store(`Finding ${i}`, "finding");
      if (i % 5 === 0) await store(`Source ${i}`, "source_summary");
      await apartInTime();
    }
    const titles = (cursor: string | undefined) =>
      listArtifacts(agent.ctx, { artifactType: "finding", cursor }).then((list) => ({
        rows: list.artifacts.map((a) => a.title),
        nextCursor: list.nextCursor,
      }));
    const { first, all } = await readAll(titles, () => store("Finding late", "finding"));
    expect(first).toEqual(findings.slice(0, ARTIFACT_PAGE_SIZE));
    expect(all).toEqual(findings);
  });

  it("the tool-call log, filtered: each call once, ties in time broken by id, calls logged meanwhile on no later page", async () => {
    const agent = await freshAgent("Calls");
    const call = (toolName: string, at: Date) => ({
      tenantId: agent.ctx.tenantId,
      apiKeyId: null,
      oauthGrantId: null,
      toolName,
      durationMs: 1,
      isError: false,
      errorCode: null,
      errorMessage: null,
      requestBytes: 10,
      responseBytes: 20,
      createdAt: at,
    });
    const start = Date.parse("2026-01-01T00:00:00Z");
    // 120 get_next_step calls, three to a millisecond, and as many of another tool.
    const rows = Array.from({ length: 120 }, (_, i) => new Date(start + Math.floor(i / 3)));
    await tenant.handle.db
      .insert(mcpToolCallLog)
      .values([
        ...rows.map((at) => call("get_next_step", at)),
        ...rows.map((at) => call("list_active_plans", at)),
      ]);
    const ids = (cursor: string | undefined) =>
      getToolCallLog(agent.ctx, { tool: "get_next_step", cursor }).then((log) => ({
        rows: log.calls.map((c) => c.id),
        nextCursor: log.nextCursor,
      }));
    const { all } = await readAll(ids, () =>
      tenant.handle.db.insert(mcpToolCallLog).values(call("get_next_step", new Date())),
    );
    expect(all).toHaveLength(120);
    expect(new Set(all).size).toBe(120);
    const log = await getToolCallLog(agent.ctx, { tool: "get_next_step" });
    expect(log.total).toBe(121);
  });

  it("the admin's stalled plans: each plan needing a person once, least recently active first, a page at a time", async () => {
    const agent = await freshAgent("Stalled");
    // More plans holding a failed step than one page reads.
    const count = 53;
    const failing: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const { planId, steps } = await agent.ok("create_research_plan", {
        name: `Failing ${i}`,
        researchQuestion: "q",
        steps: planSteps("analyze", "analyze"),
      });
      await agent.ok("modify_plan", {
        planId,
        action: "fail_step",
        stepId: steps[0].stepId,
        reason: "It cannot be done.",
        modificationRationale: "Failed.",
      });
      failing.push(planId);
      await apartInTime();
    }
    const ids = (cursor: string | undefined) =>
      listStalledPlans(agent.ctx, { cursor }).then((list) => ({
        rows: list.stalled.map((plan) => plan.planId),
        nextCursor: list.nextCursor,
      }));
    const { first, all } = await readAll(ids, async () => {});
    expect(first.length).toBeLessThan(count);
    expect(all).toEqual(failing);
    // Another list's cursor is refused.
    const plansCursor = (await listPlans(agent.ctx, { pageSize: 1 })).nextCursor ?? undefined;
    expect(
      isCursorRefused(await refusal(() => listStalledPlans(agent.ctx, { cursor: plansCursor }))),
    ).toBe(true);
  });

  it("refuses a cursor the list did not give: made up, or another list's (list_active_plans' too)", async () => {
    const agent = await freshAgent("Refused");
    for (const name of ["One", "Two", "Three"]) await createPlan(agent.ctx, name);
    const plansCursor = (await listPlans(agent.ctx, { pageSize: 1 })).nextCursor ?? "";
    const { planId } = await createPlan(agent.ctx, "Four");
    const reads = (cursor: string) => [
      () => listPlans(agent.ctx, { cursor }),
      () => getPlanPage(agent.ctx, planId, cursor),
      () => listArtifacts(agent.ctx, { cursor }),
      () => getToolCallLog(agent.ctx, { cursor }),
    ];
    // Made up, not a position, and longer than any cursor a list gives.
    for (const cursor of [
      "not-a-cursor",
      Buffer.from("[1,2]").toString("base64url"),
      "a".repeat(600),
    ]) {
      for (const read of reads(cursor)) {
        const error = await refusal(read);
        expect(isCursorRefused(error)).toBe(true);
        expect(error).toMatchObject({
          code: "VALIDATION_ERROR",
          message: expect.stringMatching(/is not one this list gave/),
        });
      }
    }
    // An edited cursor of the list itself: a position past any bigint.
    const [list, , id] = JSON.parse(Buffer.from(plansCursor, "base64url").toString("utf8"));
    const edited = Buffer.from(JSON.stringify([list, "9".repeat(20), id])).toString("base64url");
    expect(isCursorRefused(await refusal(() => listPlans(agent.ctx, { cursor: edited })))).toBe(
      true,
    );
    // The plans list's cursor is a place in that list only.
    for (const read of reads(plansCursor).slice(1)) {
      expect(isCursorRefused(await refusal(read))).toBe(true);
    }
    // list_active_plans reads the same plans in the same order, and is another list.
    const activeCursor = (await agent.ok("list_active_plans", { limit: 1 })).nextCursor;
    expect(activeCursor).toEqual(expect.any(String));
    expect(await agent.fails("list_active_plans", { cursor: plansCursor })).toMatch(
      /^VALIDATION_ERROR: cursor is not one this list gave: pass the previous answer's nextCursor, or leave it out for the first page/,
    );
    const refused = await refusal(() => listPlans(agent.ctx, { cursor: activeCursor }));
    expect(isCursorRefused(refused)).toBe(true);
    expect(refused).toMatchObject({ message: expect.stringMatching(/is not one this list gave/) });
    // Each still reads its own.
    expect(
      (await agent.ok("list_active_plans", { limit: 1, cursor: activeCursor })).plans,
    ).toHaveLength(1);
    expect((await listPlans(agent.ctx, { pageSize: 1, cursor: plansCursor })).plans).toHaveLength(
      1,
    );
    // Another tenant's plan is not found, whatever the cursor.
    const beta = await freshAgent("Beta");
    expect(await getPlanPage(beta.ctx, planId, "not-a-cursor")).toBeUndefined();
  });
});
