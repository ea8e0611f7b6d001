/**
 * The pages' read models of long values (docs/reviews.md). The inbox: a page
 * of INBOX_PAGE_SIZE reviews at a time, oldest first, by cursor; long summaries, proposals and instructions come shortened (a
 * proposal within a size, the fields beyond it counted), each
 * whole behind its "Show all" value (readFullValue), which another team cannot
 * read. The plan page reads no proposal but the pending review's. In process,
 * on PGlite and on PostgreSQL 15.
 */
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { planAuditLog, planSteps as planStepsTable, users } from "@/lib/db/schema";
import type { ServiceContext } from "@/lib/services/shared/context";
import {
  PREVIEW_CHARS,
  PROPOSAL_SHOWN_CHARS,
  PROPOSAL_SHOWN_FIELDS,
  readFullValue,
} from "@/lib/services/views/full-values";
import { getPlanPage } from "@/lib/services/views/plan-page";
import {
  INBOX_PAGE_SIZE,
  listInbox,
  recentDecisions,
  recentDecisionsQuery,
} from "@/lib/services/views/review-inbox";
import { BACKENDS } from "../support/databases";
import { genericPlanOf } from "../support/generic-plan";
import { planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("the review inbox on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  /** The tenant's person, as the inbox's viewer. */
  async function viewer(ctx: ServiceContext): Promise<ServiceContext> {
    const [user] = await ctx.db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.tenantId, ctx.tenantId));
    return { ...ctx, actor: { type: "user", id: user?.id ?? null, label: "Reviewer" } };
  }

  /** A one-step plan whose step is in progress. */
  async function stepInProgress(name: string) {
    const created = await tenant.agent.ok("create_research_plan", {
      name,
      researchQuestion: "q",
      steps: planSteps("analyze"),
    });
    const planId = created.planId as string;
    const stepId = (await tenant.agent.ok("get_next_step", { planId })).step.stepId as string;
    return { planId, stepId };
  }

  async function planAtReview(name: string, extra: Record<string, unknown> = {}) {
    const { planId, stepId } = await stepInProgress(name);
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: `Check ${name}.`,
      ...extra,
    });
    return { planId, reviewRequestId: review.reviewRequestId as string };
  }

  it("pages its reviews oldest first by cursor: each once, one asked meanwhile last; a made-up cursor refused", async () => {
    const count = INBOX_PAGE_SIZE + 3;
    const asked: string[] = [];
    for (let i = 0; i < count; i += 1) {
      asked.push((await planAtReview(`Paged ${i}`)).reviewRequestId);
    }
    const me = await viewer(tenant.agent.ctx);
    const first = await listInbox(me, { role: "admin" });
    expect(first.total).toBe(count);
    expect(first.reviews.map((r) => r.reviewRequestId)).toEqual(asked.slice(0, INBOX_PAGE_SIZE));
    expect(first.nextCursor).toEqual(expect.any(String));
    // Asked after the first page was read: the newest, so it comes last, once.
    asked.push((await planAtReview("Paged late")).reviewRequestId);
    const second = await listInbox(me, { role: "admin", cursor: first.nextCursor ?? undefined });
    expect(second.reviews.map((r) => r.reviewRequestId)).toEqual(asked.slice(INBOX_PAGE_SIZE));
    expect(second.nextCursor).toBeNull();
    expect(second.total).toBe(count + 1);
    // Made up, or longer than any cursor a list gives: the same refusal, which the page shows.
    for (const cursor of ["not-a-cursor", "a".repeat(600)]) {
      await expect(listInbox(me, { role: "admin", cursor })).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        message: expect.stringMatching(/^cursor is not one this list gave/),
        metadata: { cursorRefused: true },
      });
    }
  });

  it("lists the team's latest decisions newest first, read from the end of the team's index", async () => {
    const decided: string[] = [];
    for (const decision of ["approve", "reject"] as const) {
      const { planId, reviewRequestId } = await planAtReview(`Decided ${decision}`);
      await tenant.agent.ok("submit_user_decision", { planId, reviewRequestId, decision });
      decided.push(reviewRequestId);
    }
    const recent = await recentDecisions(tenant.agent.ctx, 2);
    expect(recent.map((d) => [d.reviewRequestId, d.decision])).toEqual([
      [decided[1], "reject"],
      [decided[0], "approve"],
    ]);
    expect(recent[0]).toMatchObject({ planName: "Decided reject", stepOrder: 1 });
    const lines = await genericPlanOf(
      tenant.handle.db,
      recentDecisionsQuery(tenant.agent.ctx, 10),
      {
        seqScans: false,
      },
    );
    expect(lines).toContain("review_decision_tenant_idx");
    expect(lines).not.toMatch(/Sort/);
  });

  it("shortens a long proposal field by field in the agent's order, a long summary and instructions, and gives each whole on request", async () => {
    // Keys jsonb would reorder (shorter first): the person sees the agent's order.
    const proposedResult = {
      rows: Array.from({ length: 400 }, (_, i) => `row ${i} of the table`),
      verdict: { zeta: "last in jsonb", a: "first in jsonb" },
      n: 3,
    };
    const summary = "s".repeat(PREVIEW_CHARS + 10);
    const { planId, reviewRequestId } = await planAtReview("Long", { proposedResult, summary });
    const me = await viewer(tenant.agent.ctx);
    const entry = (await listInbox(me, { role: "admin", planId })).reviews[0];
    expect(entry?.proposal?.map((field) => field.key)).toEqual(["rows", "verdict", "n"]);
    const [rows, verdict, n] = entry?.proposal ?? [];
    expect(rows?.value.shortened).toBe(true);
    expect(rows?.value.text).toHaveLength(PREVIEW_CHARS);
    expect(rows?.value.text).toMatch(/^\[\s+"row 0 of the table",/);
    // The value's size as stored (unindented): shortenJson never writes it indented whole.
    expect(rows?.value.bytes).toBe(Buffer.byteLength(JSON.stringify(proposedResult.rows), "utf8"));
    expect(verdict?.value).toMatchObject({ shortened: false });
    expect(verdict?.value.text).toBe(JSON.stringify(proposedResult.verdict, null, 2));
    expect(n?.value.text).toBe("3");
    expect(entry?.summary).toEqual({
      text: "s".repeat(PREVIEW_CHARS),
      shortened: true,
      bytes: summary.length,
    });
    expect(entry?.stepInstructions.shortened).toBe(false);

    const field = (name: string) => ({
      review: reviewRequestId,
      part: "proposal" as const,
      field: name,
    });
    const full = await readFullValue(me, planId, field("rows"));
    expect(full).toEqual({ text: JSON.stringify(proposedResult.rows, null, 2), json: true });
    expect(await readFullValue(me, planId, field("verdict"))).toEqual({
      text: JSON.stringify(proposedResult.verdict, null, 2),
      json: true,
    });
    expect(await readFullValue(me, planId, field("absent"))).toBeUndefined();
    expect(await readFullValue(me, planId, { review: reviewRequestId, part: "summary" })).toEqual({
      text: summary,
      json: false,
    });
    // Not the team's: not found, as is a review of another plan.
    const other = await tenantContext(tenant.handle.db, "Stranger");
    expect(await readFullValue(other, planId, field("rows"))).toBeUndefined();
    const elsewhere = await planAtReview("Elsewhere");
    expect(
      await readFullValue(me, elsewhere.planId, { review: reviewRequestId, part: "summary" }),
    ).toBeUndefined();
  });

  it("shows a proposal of many fields within its size, the first fields in order, and the rest counted and whole on request", async () => {
    const proposedResult = Object.fromEntries(
      Array.from({ length: 300 }, (_, i) => [`field${i}`, "v".repeat(300)]),
    );
    const long = "k".repeat(300);
    const { planId, reviewRequestId } = await planAtReview("Wide", {
      proposedResult: { [long]: 1, ...proposedResult },
    });
    const me = await viewer(tenant.agent.ctx);
    const [entry] = (await listInbox(me, { role: "admin", planId })).reviews;
    const shown = entry?.proposal ?? [];
    // A key too long for its own link is left to the whole proposal.
    expect(shown.map((field) => field.key)).toEqual(
      Object.keys(proposedResult).slice(0, shown.length),
    );
    const chars = shown.reduce((sum, field) => sum + field.value.text.length, 0);
    expect(chars).toBeLessThanOrEqual(PROPOSAL_SHOWN_CHARS);
    expect(shown.length).toBeLessThanOrEqual(PROPOSAL_SHOWN_FIELDS);
    expect(entry?.proposalFieldsOmitted).toBe(301 - shown.length);
    const whole = await readFullValue(me, planId, { review: reviewRequestId, part: "proposal" });
    expect(JSON.parse(whole?.text ?? "null")).toEqual({ [long]: 1, ...proposedResult });
  });

  it("shows a short proposal whole, and none when the agent proposed none", async () => {
    const { planId } = await planAtReview("Short", { proposedResult: { sources: 3 } });
    const me = await viewer(tenant.agent.ctx);
    const [entry] = (await listInbox(me, { role: "admin", planId })).reviews;
    expect(entry?.proposal).toEqual([
      { key: "sources", value: { text: "3", shortened: false, bytes: 1 } },
    ]);
    const none = await planAtReview("None");
    const [bare] = (await listInbox(me, { role: "admin", planId: none.planId })).reviews;
    expect(bare?.proposal).toBeNull();
  });

  it("tells when the step's instructions changed after the request, with the digest of what it shows", async () => {
    const created = await planAtReview("Changed");
    const me = await viewer(tenant.agent.ctx);
    const [before] = (await listInbox(me, { role: "admin", planId: created.planId })).reviews;
    expect(before?.instructionsChanged).toBe(false);
    const pageReview = async () => {
      const review = (await getPlanPage(me, created.planId))?.pendingReview;
      expect(review?.reviewRequestId).toBe(created.reviewRequestId);
      return review;
    };
    expect((await pageReview())?.instructionsChanged).toBe(false);
    // What modify_plan did to a step while its review waited, in earlier versions.
    await tenant.handle.db
      .update(planStepsTable)
      .set({ instructions: "Analyse it differently." })
      .where(eq(planStepsTable.planId, created.planId));
    const [after] = (await listInbox(me, { role: "admin", planId: created.planId })).reviews;
    expect(after?.instructionsChanged).toBe(true);
    // The plan page's read model says the same.
    expect((await pageReview())?.instructionsChanged).toBe(true);
    expect(after?.stepInstructions.text).toBe("Analyse it differently.");
    expect(after?.contentDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(after?.contentDigest).not.toBe(before?.contentDigest);
    // A decision bound to what the inbox now shows is accepted.
    await tenant.agent.ok("submit_user_decision", {
      planId: created.planId,
      reviewRequestId: created.reviewRequestId,
      decision: "approve",
      contentDigest: after?.contentDigest,
    });
  });

  it("gives a step's result, instructions and an audit payload whole, for the plan page's Show all", async () => {
    const { planId, stepId } = await stepInProgress("Values");
    const result = { rows: Array.from({ length: 300 }, (_, i) => `value ${i}`) };
    await tenant.agent.submit(planId, stepId, { result });
    const me = await viewer(tenant.agent.ctx);
    const full = await readFullValue(me, planId, { step: stepId, part: "result" });
    expect(full?.json).toBe(true);
    expect(JSON.parse(full?.text ?? "")).toEqual(result);
    expect(await readFullValue(me, planId, { step: stepId, part: "instructions" })).toEqual({
      text: "Step 1: do the analyze work.",
      json: false,
    });
    // A part the step does not have, like its arguments, is not found.
    expect(await readFullValue(me, planId, { step: stepId, part: "arguments" })).toBeUndefined();
    const [row] = await tenant.handle.db
      .select({ id: planAuditLog.id, payload: planAuditLog.payload })
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "step_completed")));
    const payload = await readFullValue(me, planId, { audit: row?.id ?? "" });
    expect(JSON.parse(payload?.text ?? "")).toEqual(row?.payload);
    const other = await tenantContext(tenant.handle.db, "Outsider");
    expect(await readFullValue(other, planId, { audit: row?.id ?? "" })).toBeUndefined();
    expect(await readFullValue(other, planId, { step: stepId, part: "result" })).toBeUndefined();
  });

  it("the plan page reads the pending review's proposal only; get_research_context every one", async () => {
    const { planId, stepId } = await stepInProgress("Proposals");
    const first = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "First.",
      proposedResult: { round: 1 },
    });
    await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId: first.reviewRequestId,
      decision: "modify",
      feedback: "Again.",
    });
    await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Second.",
      proposedResult: { round: 2 },
    });
    const page = await getPlanPage(await viewer(tenant.agent.ctx), planId);
    await page?.trail;
    expect(page?.pendingReview?.proposalRead).toEqual({
      count: 1,
      fields: [{ key: "round", start: "2", whole: true, bytes: 1 }],
    });
    const context = await tenant.agent.ok("get_research_context", { planId, sessionId: "s" });
    expect(context.reviews.map((r: { proposedResult: unknown }) => r.proposedResult)).toEqual([
      { round: 1 },
      { round: 2 },
    ]);
  });
});
