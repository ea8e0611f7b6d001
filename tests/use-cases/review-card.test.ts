/**
 * The review card and the plan card (docs/mcp-apps.md), through their
 * app-only tools' use cases, as each party that reaches them: a connected app
 * a person authorized decides as that person in their client (the "client"
 * channel), also where only people decide; an API key never does there, and
 * its decision changes nothing; a card that went stale (decided on the web
 * meanwhile) changes nothing. In process, on PGlite and PostgreSQL 15; the
 * cards in a real host are e2e/mcp-apps.spec.ts.
 */
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { planSteps as planStepsTable, tenants } from "@/lib/db/schema";
import { assignReview } from "@/lib/services/reviews/assign-review";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import type { ServiceContext } from "@/lib/services/shared/context";
import { pendingReviewOf, teamMembers } from "@/lib/services/views/pending-review";
import { getPlanPage } from "@/lib/services/views/plan-views";
import { BACKENDS } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  signedInAdmin,
  useFreshTenant,
} from "../support/in-process";

describe.each(BACKENDS)("the review card and the plan card on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as {
    person: InProcessAgent;
    personCtx: ServiceContext & { actor: { id: string } };
    app: InProcessAgent;
  };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
    // A connected app the admin authorized in Cairn's browser flow.
    as.app = inProcessAgent({
      ...tenant.agent.ctx,
      actor: {
        type: "oauth_app",
        id: randomUUID(),
        label: 'app "Chat" of alpha@example.com',
        credential: { userId: as.personCtx.actor.id, clientId: "chat-client" },
      },
    });
  });

  async function policy(decisionPolicy: "people_only" | "people_and_agents") {
    await setDecisionPolicy(as.personCtx, { decisionPolicy });
  }

  /** A plan paused at its checkpoint, with a proposal to approve. */
  async function planAtReview() {
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Card",
      researchQuestion: "Which heat pump?",
      steps: [
        { stepType: "checkpoint", instructions: "Confirm the shortlist with the person." },
        { stepType: "synthesize", instructions: "Write the answer." },
      ],
    });
    const next = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Three pumps fit the budget.",
      questions: ["Is 9,000 euros the ceiling?"],
      proposedResult: { shortlist: ["A", "B", "C"] },
      proposedConfidence: 0.8,
    });
    return { planId: planId as string, review };
  }

  it("shows what the review page shows, and decides as the person in their client", async () => {
    await policy("people_only");
    const { planId, review } = await planAtReview();
    const card = await as.app.ok("read_review_card", { planId });
    expect(card.decideHere).toEqual({ allowed: true, as: "person", reason: null });
    expect(card.review).toMatchObject({
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      stepOrder: 1,
      summary: { text: "Three pumps fit the budget.", shortened: false },
      questions: ["Is 9,000 euros the ceiling?"],
      proposedConfidence: 0.8,
      stepInstructions: { text: "Confirm the shortlist with the person." },
      requestedBy: expect.stringContaining("Alpha agent"),
    });
    expect(JSON.parse(card.review?.proposal?.text ?? "")).toEqual({ shortlist: ["A", "B", "C"] });
    expect(card.reviewUrl).toMatch(new RegExp(`/plans/${planId}#review$`));

    const decided = await as.app.ok("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "approve",
    });
    expect(decided).toMatchObject({ channel: "client", stepStatus: "completed" });
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.reviews[0].decision).toMatchObject({
      channel: "client",
      decidedBy: expect.stringContaining(`answering in the MCP client "Cairn's review card"`),
    });
    expect(context.steps[0].result).toEqual({ shortlist: ["A", "B", "C"] });
    expect((await as.app.ok("read_review_card", { planId })).review).toBeNull();
  });

  it("shows the review as the plan page does: an assignee, and instructions changed since the request", async () => {
    const { planId, review } = await planAtReview();
    await assignReview(as.personCtx, {
      reviewRequestId: review.reviewRequestId,
      userId: as.personCtx.actor.id,
    });
    // What modify_plan did to a step while its review waited, in earlier versions.
    await tenant.handle.db
      .update(planStepsTable)
      .set({ instructions: "Confirm the shortlist differently." })
      .where(eq(planStepsTable.planId, planId));
    const card = await as.app.ok("read_review_card", { planId });
    expect(card.review).toMatchObject({
      instructionsChanged: true,
      stepInstructions: { text: "Confirm the shortlist differently." },
      lastOpenStep: false,
      assignedUserId: as.personCtx.actor.id,
      assignedUserLabel: expect.any(String),
    });
    expect(card.review?.contentDigest).not.toBe(review.contentDigest);
    const page = await getPlanPage(as.personCtx, planId);
    if (!page) throw new Error("no plan page");
    expect(card.review).toEqual(pendingReviewOf(page, await teamMembers(as.personCtx)));
  });

  it("on an API key where only people decide: says why, links the page, and its decision changes nothing", async () => {
    await policy("people_only");
    const { planId, review } = await planAtReview();
    const card = await tenant.agent.ok("read_review_card", { planId });
    expect(card.decideHere).toMatchObject({ allowed: false, as: "agent" });
    expect(card.decideHere.reason).toContain("Decide on the review page");
    const refused = await tenant.agent.fails("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "approve",
    });
    expect(refused).toMatch(/^FORBIDDEN: .*only people decide/);
    expect(refused).toContain(`/plans/${planId}#review`);
    expect(await tenant.agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "awaiting_review",
    });
  });

  it("on an app the team does not trust, where only people decide, decides nothing", async () => {
    await policy("people_only");
    await tenant.handle.db
      .update(tenants)
      .set({ trustedClients: ["another-client"] })
      .where(eq(tenants.id, tenant.agent.ctx.tenantId));
    try {
      const { planId, review } = await planAtReview();
      expect((await as.app.ok("read_review_card", { planId })).decideHere.allowed).toBe(false);
      const refused = await as.app.fails("decide_in_review_card", {
        planId,
        reviewRequestId: review.reviewRequestId,
        contentDigest: review.contentDigest,
        decision: "skip",
      });
      expect(refused).toMatch(/^FORBIDDEN: /);
    } finally {
      await tenant.handle.db
        .update(tenants)
        .set({ trustedClients: null })
        .where(eq(tenants.id, tenant.agent.ctx.tenantId));
    }
  });

  it("where agents may relay, an API key's card decision is its relay, not a person's", async () => {
    await policy("people_and_agents");
    const { planId, review } = await planAtReview();
    expect((await tenant.agent.ok("read_review_card", { planId })).decideHere).toEqual({
      allowed: true,
      as: "agent",
      reason: null,
    });
    const decided = await tenant.agent.ok("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "modify",
      feedback: "Add a fourth pump.",
    });
    expect(decided).toMatchObject({ channel: "relayed", decision: "modify" });
  });

  it("a stale card (decided on the web meanwhile) changes nothing", async () => {
    await policy("people_only");
    const { planId, review } = await planAtReview();
    await as.person.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "skip",
    });
    const stale = await as.app.fails("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "approve",
    });
    expect(stale).toMatch(/^CONFLICT: /);
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.steps[0].status).toBe("skipped");
    expect(context.reviews[0].decision).toMatchObject({ decision: "skip", channel: "web" });
  });

  it("a card decision must name what the card showed", async () => {
    await policy("people_only");
    const { planId, review } = await planAtReview();
    const unbound = await as.app.fails("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "approve",
    });
    expect(unbound).toMatch(/^VALIDATION_ERROR: .*contentDigest/);
    const noFeedback = await as.app.fails("decide_in_review_card", {
      planId,
      reviewRequestId: review.reviewRequestId,
      contentDigest: review.contentDigest,
      decision: "modify",
    });
    expect(noFeedback).toMatch(/^VALIDATION_ERROR: .*feedback/);
  });

  it("shows the claims to check up to the reviewed step, as the review page does", async () => {
    await policy("people_only");
    const { planId } = await tenant.agent.ok("create_research_plan", {
      name: "Card evidence",
      researchQuestion: "Which heat pump?",
      steps: [
        { stepType: "search", instructions: "Find the pumps." },
        { stepType: "checkpoint", instructions: "Confirm the shortlist." },
      ],
    });
    const search = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.submit(planId, search.step.stepId, {
      evidence: {
        sources: [{ url: "https://example.org/pumps", title: "Pump test" }],
        claims: [
          {
            text: "Pump B is the quietest.",
            key: true,
            supports: [{ source: "https://example.org/pumps", quote: "B: 38 dB" }],
          },
          { text: "Pump C lasts 25 years." },
        ],
      },
    });
    const checkpoint = await tenant.agent.ok("get_next_step", { planId });
    await tenant.agent.ok("request_user_review", {
      planId,
      stepId: checkpoint.step.stepId,
      summary: "Shortlist ready.",
    });
    const card = await as.app.ok("read_review_card", { planId });
    expect(card.review?.stepOrder).toBe(2);
    expect(
      card.evidence.claims.map((claim) => ({ text: claim.text, status: claim.status })),
    ).toEqual(
      expect.arrayContaining([
        { text: "Pump B is the quietest.", status: "supported" },
        { text: "Pump C lasts 25 years.", status: "unsupported" },
      ]),
    );
  });

  it("the plan card follows a plan, and another tenant's plan is not found", async () => {
    const { planId } = await planAtReview();
    const card = await as.app.ok("read_plan_card", { planId });
    expect(card).toMatchObject({
      planId,
      name: "Card",
      status: "awaiting_review",
      progress: { total: 2 },
      steps: [
        { stepOrder: 1, stepType: "checkpoint", status: "awaiting_input" },
        { stepOrder: 2, stepType: "synthesize", status: "pending" },
      ],
    });
    expect(card.planUrl).toMatch(new RegExp(`/plans/${planId}$`));
    const elsewhere = randomUUID();
    expect(await as.app.fails("read_plan_card", { planId: elsewhere })).toMatch(/^NOT_FOUND: /);
    expect(await as.app.fails("read_review_card", { planId: elsewhere })).toMatch(/^NOT_FOUND: /);
  });
});
