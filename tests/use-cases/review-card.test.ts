/**
 * The review card and the plan card (docs/mcp-apps.md), through their
 * app-only tools' use cases, as each party that reaches them, with connected
 * apps made through the OAuth consent flow: where only people decide, a
 * card's decision is the person's own (the "client" channel) only from an app
 * the team's admins named among its trusted apps; from any other connected
 * app (an agent's command line a person connected, the issue's reproduction)
 * and from an API key it is a relay, refused as submit_user_decision refuses
 * it, and changes nothing. Where agents may relay, an unnamed connected app
 * still answers as its person and a key as its relay. A card that went stale
 * changes nothing. In process, on PGlite and PostgreSQL 15; the cards in a
 * real host are e2e/mcp-apps.spec.ts, the door in tests/mcp-cards.test.ts.
 */
import { randomUUID } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { planAuditLog, planSteps as planStepsTable } from "@/lib/db/schema";
import type { ReviewDecision } from "@/lib/plan-engine/states";
import { submitUserDecision } from "@/lib/services/plans/submit-user-decision";
import { assignReview } from "@/lib/services/reviews/assign-review";
import { setDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { answeringInClient, MAX_CLIENT_NAME_CHARS } from "@/lib/services/reviews/in-client-trust";
import { pendingReviewOf } from "@/lib/services/reviews/review-view";
import { setTrustedClients } from "@/lib/services/reviews/trusted-clients";
import type { ServiceContext } from "@/lib/services/shared/context";
import { teamMembers } from "@/lib/services/views/pending-review";
import { getPlanPage } from "@/lib/services/views/plan-page";
import { teamRulesView } from "@/lib/services/views/team-rules";
import { BACKENDS } from "../support/databases";
import {
  connectedAppAgent,
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
    /** The chat host the team names among its trusted apps (below). */
    app: InProcessAgent;
    appClientId: string;
    /** An agent's command line the same person connected by OAuth. */
    cli: InProcessAgent;
    cliClientId: string;
  };

  beforeAll(async () => {
    as.personCtx = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.person = inProcessAgent(as.personCtx);
    const chat = await connectedAppAgent(tenant.handle.db, as.personCtx, "Chat");
    as.app = chat.agent;
    as.appClientId = chat.clientId;
    const cli = await connectedAppAgent(tenant.handle.db, as.personCtx, "Agent CLI");
    as.cli = cli.agent;
    as.cliClientId = cli.clientId;
  });

  async function policy(decisionPolicy: "people_only" | "people_and_agents") {
    await setDecisionPolicy(as.personCtx, { decisionPolicy });
  }

  const trust = (clientIds: string[] | null) => setTrustedClients(as.personCtx, { clientIds });

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

  /** A card's decision on `review`, as the card sends it. */
  const inCard = (
    planId: string,
    review: { reviewRequestId: string; contentDigest: string },
    decision: ReviewDecision,
  ) => ({
    planId,
    reviewRequestId: review.reviewRequestId,
    contentDigest: review.contentDigest,
    decision,
  });

  /** The plan's decision rows on its trail. */
  async function decisionsOn(planId: string) {
    const rows = await tenant.handle.db
      .select({ payload: planAuditLog.payload, actorLabel: planAuditLog.actorLabel })
      .from(planAuditLog)
      .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.eventType, "user_reviewed")));
    return rows.filter((row) => (row.payload as { action?: string }).action === "decision");
  }

  it("refuses an agent CLI connected by OAuth that approves in the card with what get_next_step told it, where only people decide", async () => {
    await policy("people_only");
    await trust(null);
    const { planId } = await planAtReview();
    // All the agent needs, from the loop's own answer.
    const waiting = await as.cli.ok("get_next_step", { planId });
    expect(waiting.status).toBe("awaiting_review");
    const { reviewRequestId, contentDigest } = waiting.review;
    for (const agent of [as.cli, as.app]) {
      const card = await agent.ok("read_review_card", { planId });
      expect(card.decideHere).toMatchObject({ allowed: false, as: "agent" });
      expect(card.decideHere.reason).toContain("Decide on the review page");
      const refused = await agent.fails("decide_in_review_card", {
        planId,
        reviewRequestId,
        contentDigest,
        decision: "approve",
      });
      // The same refusal as submit_user_decision's, with the review page's link.
      const relayed = await agent.fails("submit_user_decision", {
        planId,
        reviewRequestId,
        contentDigest,
        decision: "approve",
      });
      expect(refused).toMatch(/^FORBIDDEN: This team lets only people decide checkpoints/);
      expect(refused).toBe(relayed);
      expect(refused).toContain(`/plans/${planId}#review`);
    }
    expect(await tenant.agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "awaiting_review",
      steps: [{ status: "awaiting_input" }, { status: "pending" }],
    });
    expect(await decisionsOn(planId)).toEqual([]);
    // The admin page says so for each connected app.
    const { teamClients } = await teamRulesView(as.personCtx);
    expect(teamClients.map((client) => client.countsAsPerson)).toEqual([false, false]);
  });

  it("from an app the team names, shows what the review page shows and decides as the person in their client", async () => {
    await policy("people_only");
    await trust([as.appClientId]);
    const { teamClients } = await teamRulesView(as.personCtx);
    expect(
      Object.fromEntries(teamClients.map((client) => [client.clientName, client.countsAsPerson])),
    ).toEqual({ Chat: true, "Agent CLI": false });
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
    expect(card.review?.proposal).toEqual([
      {
        key: "shortlist",
        // Shown indented; its size is the value's as stored, unindented, as every
        // shortened JSON value's is (shortenJson, docs/security.md).
        value: {
          text: JSON.stringify(["A", "B", "C"], null, 2),
          shortened: false,
          bytes: JSON.stringify(["A", "B", "C"]).length,
        },
      },
    ]);
    expect(card.reviewUrl).toMatch(new RegExp(`/plans/${planId}#review$`));
    // The CLI is not named: still refused, on the same review.
    expect(await as.cli.fails("decide_in_review_card", inCard(planId, review, "approve"))).toMatch(
      /^FORBIDDEN: /,
    );

    const decided = await as.app.ok("decide_in_review_card", inCard(planId, review, "approve"));
    expect(decided).toMatchObject({ channel: "client", stepStatus: "completed" });
    const context = await tenant.agent.ok("get_research_context", { planId });
    expect(context.reviews[0].decision).toMatchObject({
      channel: "client",
      decidedBy: `the user of app "Chat" of alpha@example.com, answering in the MCP client "Cairn's review card"`,
    });
    expect(context.steps[0].result).toEqual({ shortlist: ["A", "B", "C"] });
    expect((await as.app.ok("read_review_card", { planId })).review).toBeNull();
  });

  it("decides on the trusted apps as they stand in the decision's transaction, not as the card read them; an app not named decides nothing", async () => {
    await policy("people_only");
    await trust([as.appClientId]);
    const { planId, review } = await planAtReview();
    expect((await as.app.ok("read_review_card", { planId })).decideHere.allowed).toBe(true);
    // The admin takes the app off the list while the card is open.
    await trust([as.cliClientId]);
    expect((await as.app.ok("read_review_card", { planId })).decideHere.allowed).toBe(false);
    const refused = await as.app.fails("decide_in_review_card", inCard(planId, review, "approve"));
    expect(refused).toMatch(/^FORBIDDEN: /);
    expect(await decisionsOn(planId)).toEqual([]);
    await trust([as.appClientId]);
  });

  it("bounds a client's name for itself where the trail names it", async () => {
    await policy("people_only");
    await trust([as.appClientId]);
    const { planId, review } = await planAtReview();
    const name = `Evil\u001b[2J\u202e client\n${"x".repeat(100_000)}`;
    await submitUserDecision(answeringInClient(as.app.ctx, name), inCard(planId, review, "skip"));
    const [decision] = await decisionsOn(planId);
    const clientName = JSON.parse(
      decision?.actorLabel.split("answering in the MCP client ")[1] ?? "",
    );
    expect(clientName).toMatch(/^Evil \[2J client x+$/);
    expect([...clientName]).toHaveLength(MAX_CLIENT_NAME_CHARS);
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
    const refused = await tenant.agent.fails(
      "decide_in_review_card",
      inCard(planId, review, "approve"),
    );
    expect(refused).toMatch(/^FORBIDDEN: .*only people decide/);
    expect(refused).toContain(`/plans/${planId}#review`);
    expect(await tenant.agent.ok("get_plan_status", { planId })).toMatchObject({
      status: "awaiting_review",
    });
  });

  it("where agents may relay, an unnamed connected app's card decision is its person's, an API key's its relay", async () => {
    await policy("people_and_agents");
    await trust(null);
    for (const [agent, as_, channel] of [
      [as.cli, "person", "client"],
      [tenant.agent, "agent", "relayed"],
    ] as const) {
      const { planId, review } = await planAtReview();
      expect((await agent.ok("read_review_card", { planId })).decideHere).toEqual({
        allowed: true,
        as: as_,
        reason: null,
      });
      const decided = await agent.ok("decide_in_review_card", {
        planId,
        reviewRequestId: review.reviewRequestId,
        contentDigest: review.contentDigest,
        decision: "modify",
        feedback: "Add a fourth pump.",
      });
      expect(decided).toMatchObject({ channel, decision: "modify" });
    }
    await trust([as.appClientId]);
  });

  it("a stale card (decided on the web meanwhile) changes nothing", async () => {
    await policy("people_only");
    const { planId, review } = await planAtReview();
    await as.person.ok("submit_user_decision", inCard(planId, review, "skip"));
    const stale = await as.app.fails("decide_in_review_card", inCard(planId, review, "approve"));
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
    const noFeedback = await as.app.fails(
      "decide_in_review_card",
      inCard(planId, review, "modify"),
    );
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
