/**
 * Whose answer a review form inside an MCP client is (docs/reviews.md, "What
 * proves a person was there"), over HTTP against the production build with
 * the SDK v2 client pinned to 2026-07-28, on both databases. A connected app a
 * person authorized in Cairn's browser flow answers as that person, also
 * where only people decide once the team names it among its trusted apps (not
 * before); an API key never does: where only people decide
 * it is sent to the review page (or left to the tool flow), and an answer it
 * writes itself, with a request state built from what request_user_review
 * told it, changes nothing; where agents may relay, its form answer is the
 * key's relay.
 */
import type { ElicitResult } from "@modelcontextprotocol/client";
import { and, asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planAuditLog } from "@/lib/db/schema";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import {
  connectAgent,
  connectModernAgent,
  type ModernAgent,
  plainResult,
  postMcp,
} from "./support/mcp-client";
import { connectAppOverHttp } from "./support/oauth-over-http";
import { signInOverHttp, type WebSession } from "./support/web-session";

type Elicited = { mode?: string; message?: string; url?: string };

describe.each(BACKENDS)("answers given inside an MCP client (%s)", (backend) => {
  let app: AppServer;
  let admin: WebSession;
  const plans: Record<string, string> = {};
  /** The connected app a person authorized ("Chat client"), and its client_id. */
  let chatToken: string;
  let chatClientId: string;

  beforeAll(async () => {
    app = await startAppServer(backend);
    admin = await signInOverHttp(app.url, app.tenantA.email);
  });
  afterAll(async () => {
    await app?.stop();
  });

  async function setPolicy(decisionPolicy: "people_only" | "people_and_agents") {
    const saved = await admin.action("/admin", "setDecisionPolicyAction", { decisionPolicy });
    expect(saved.status).toBe(200);
  }

  /** A 2026-07-28 client that shows its user Cairn's forms and answers them with `answer`. */
  async function clientWith(
    credential: string,
    elicitation: { form?: Record<string, never>; url?: Record<string, never> },
    answer: ElicitResult,
  ) {
    const shown: Elicited[] = [];
    const agent = await connectModernAgent(app.mcpUrl, credential, {
      capabilities: { elicitation },
    });
    agent.client.setRequestHandler("elicitation/create", async (request) => {
      shown.push(request.params as Elicited);
      return answer;
    });
    return { agent, shown };
  }

  /** A plan whose first step (a checkpoint) waits for a review the agent asked for. */
  async function planAtReview(agent: ModernAgent, name: string) {
    const created = await agent.ok("create_research_plan", {
      name,
      researchQuestion: "Are heat pumps worth it?",
      steps: [
        { stepType: "checkpoint", instructions: "Show the sources." },
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    const planId: string = created.planId;
    plans[name] = planId;
    const step = await agent.ok("get_next_step", { planId });
    const review = await agent.ok("request_user_review", {
      planId,
      stepId: step.step.stepId,
      summary: "Three sources agree.",
      proposedResult: { sources: 3 },
    });
    return { planId, review };
  }

  it("where only people decide, sends an API key's client to the review page, never a form", async () => {
    await setPolicy("people_only");
    const { agent, shown } = await clientWith(
      app.tenantA.key,
      { form: {}, url: {} },
      { action: "accept", content: { decision: "approve" } },
    );
    try {
      const { planId } = await planAtReview(agent, "key, people only");
      const waiting = await agent.ok("get_next_step", { planId });
      expect(shown).toEqual([
        expect.objectContaining({ mode: "url", url: expect.stringMatching(/#review$/) }),
      ]);
      expect(waiting.status).toBe("awaiting_review");
    } finally {
      await agent.close();
    }
    // A client that can only show forms gets the tool flow's answer.
    const formOnly = await clientWith(
      app.tenantA.key,
      { form: {} },
      { action: "accept", content: { decision: "approve" } },
    );
    try {
      const { planId } = await planAtReview(formOnly.agent, "key, form only");
      const waiting = await formOnly.agent.ok("get_next_step", { planId });
      expect(formOnly.shown).toEqual([]);
      expect(waiting).toMatchObject({
        status: "awaiting_review",
        review: { summary: expect.any(String) },
      });
    } finally {
      await formOnly.agent.close();
    }
  });

  it("refuses a 2025-era key's way past a checkpoint where only people decide", async () => {
    const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    try {
      const created = await agent.ok("create_research_plan", {
        name: "2025-era checkpoint",
        researchQuestion: "q",
        steps: [{ stepType: "checkpoint", instructions: "Show the sources." }],
      });
      const step = await agent.ok("get_next_step", { planId: created.planId });
      const passed = await agent.fails(
        "submit_step_result",
        plainResult(created.planId, step.step.stepId),
      );
      expect(passed).toMatch(/^FORBIDDEN: Step 1 is a checkpoint/);
      const approving = await agent.fails("request_user_review", {
        planId: created.planId,
        stepId: step.step.stepId,
        summary: "Approve me.",
        deadlineSeconds: 1,
        onTimeout: "approve",
      });
      expect(approving).toMatch(/^FORBIDDEN: onTimeout:/);
    } finally {
      await agent.close();
    }
  });

  it("records nothing from an answer the key writes itself to a form Cairn never sent", async () => {
    const { agent } = await clientWith(app.tenantA.key, { url: {} }, { action: "accept" });
    try {
      const { planId, review } = await planAtReview(agent, "forged");
      const forged = await fetch(app.mcpUrl, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          Authorization: `Bearer ${app.tenantA.key}`,
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "tools/call",
          "Mcp-Name": "get_next_step",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "get_next_step",
            arguments: { planId },
            inputResponses: { review: { action: "accept", content: { decision: "approve" } } },
            requestState: `${review.reviewRequestId} ${review.contentDigest}`,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "forger", version: "1.0.0" },
              "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
            },
          },
        }),
      });
      const body = (await forged.json()) as { error?: { code: number }; result?: unknown };
      // The SDK refuses a request state Cairn did not sign before any handler runs.
      expect(body.error?.code).toBe(-32602);
      expect(body.result).toBeUndefined();
      const status = await agent.ok("get_plan_status", { planId });
      expect(status.status).toBe("awaiting_review");
    } finally {
      await agent.close();
    }
  });

  /** The chat app's client, whose form the person would approve, is sent to the review page instead. */
  async function sentToReviewPage(planName: string) {
    const { agent, shown } = await clientWith(
      chatToken,
      { form: {}, url: {} },
      { action: "accept", content: { decision: "approve" } },
    );
    try {
      const { planId } = await planAtReview(agent, planName);
      const waiting = await agent.ok("get_next_step", { planId });
      expect(shown).toEqual([expect.objectContaining({ mode: "url" })]);
      expect(waiting.status).toBe("awaiting_review");
    } finally {
      await agent.close();
    }
  }

  it("where only people decide, counts no answer from a connected app the team has not named", async () => {
    const { accessToken, clientId } = await connectAppOverHttp(app, admin, "Chat client");
    chatToken = accessToken;
    chatClientId = clientId;
    // No app is named yet, so this one proves no person.
    await sentToReviewPage("unnamed app");
  });

  it("counts a named app's answer as the person's own, also where only people decide", async () => {
    const saved = await admin.action("/admin", "setTrustedClientsAction", {
      trust: "only",
      clientIds: chatClientId,
    });
    expect(saved.text).toContain("count only from this app");
    const { agent, shown } = await clientWith(
      chatToken,
      { form: {} },
      { action: "accept", content: { decision: "approve", feedback: "Looks right." } },
    );
    try {
      const { planId } = await planAtReview(agent, "connected app");
      const next = await agent.ok("get_next_step", { planId });
      expect(shown).toEqual([expect.objectContaining({ mode: "form" })]);
      expect(shown[0]?.message).toContain('"sources": 3');
      expect(next).toMatchObject({ status: "ready", step: { stepOrder: 2 } });
      await agent.ok("submit_step_result", plainResult(planId, next.step.stepId));
    } finally {
      await agent.close();
    }
  });

  it("counts no answer from an app the team does not name among those it trusts", async () => {
    const other = await connectAppOverHttp(app, admin, "Other client");
    const saved = await admin.action("/admin", "setTrustedClientsAction", {
      trust: "only",
      clientIds: other.clientId,
    });
    expect(saved.text).toContain("in-client answers count only from this app");
    try {
      // Only people decide and this app proves none now.
      await sentToReviewPage("untrusted app");
    } finally {
      await admin.action("/admin", "setTrustedClientsAction", { trust: "every" });
    }
  });

  it("where agents may relay, records an API key's form answer as the key's relay", async () => {
    await setPolicy("people_and_agents");
    const { agent, shown } = await clientWith(
      app.tenantA.key,
      { form: {} },
      { action: "accept", content: { decision: "approve" } },
    );
    try {
      const { planId } = await planAtReview(agent, "key, relayed");
      const next = await agent.ok("get_next_step", { planId });
      expect(shown).toHaveLength(1);
      expect(next).toMatchObject({ status: "ready", step: { stepOrder: 2 } });
    } finally {
      await agent.close();
    }
  });

  it("keeps a 2025-era request on the tool flow whatever its _meta says it can show", async () => {
    await setPolicy("people_and_agents");
    const { agent } = await clientWith(app.tenantA.key, { form: {} }, { action: "decline" });
    try {
      const { planId } = await planAtReview(agent, "2025-era form claim");
      // No revision claim in _meta, so the SDK serves it on the 2025 era, whose
      // stateless exchange can carry no form; the capabilities it names beside
      // that claim are not the client's declaration.
      const answer = await postMcp(app.mcpUrl, app.tenantA.key, {
        method: "tools/call",
        params: {
          name: "get_next_step",
          arguments: { planId },
          _meta: {
            "io.modelcontextprotocol/clientInfo": { name: "claims a form", version: "1" },
            "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } },
          },
        },
      });
      expect(answer.status).toBe(200);
      const body = (await answer.json()) as {
        result?: { isError?: boolean; structuredContent?: { status?: string } };
      };
      expect(body.result?.isError).not.toBe(true);
      expect(body.result?.structuredContent?.status).toBe("awaiting_review");
    } finally {
      await agent.close();
    }
  });

  it("has each decision on the trail as whose it was", async () => {
    await app.stopServer();
    const db = await app.openDatabase();
    try {
      const decisionsOf = async (name: string) => {
        const rows = await db.db
          .select()
          .from(planAuditLog)
          .where(
            and(
              eq(planAuditLog.planId, plans[name] ?? ""),
              eq(planAuditLog.eventType, "user_reviewed"),
            ),
          )
          .orderBy(asc(planAuditLog.seq));
        return rows
          .filter((row) => (row.payload as { action?: string }).action === "decision")
          .map((row) => ({
            actorType: row.actorType,
            actorLabel: row.actorLabel,
            channel: (row.payload as { channel?: string }).channel,
            decisionPolicy: (row.payload as { decisionPolicy?: string }).decisionPolicy,
          }));
      };
      for (const name of [
        "key, people only",
        "key, form only",
        "forged",
        "unnamed app",
        "untrusted app",
      ]) {
        expect(await decisionsOf(name)).toEqual([]);
      }
      expect(await decisionsOf("connected app")).toEqual([
        {
          actorType: "user",
          actorLabel: `the user of app "Chat client" of ${app.tenantA.email}, answering in the MCP client "cairn-test-agent"`,
          channel: "client",
          decisionPolicy: "people_only",
        },
      ]);
      expect(await decisionsOf("key, relayed")).toEqual([
        {
          actorType: "api_key",
          actorLabel: `key "Alpha agent" of ${app.tenantA.email}`,
          channel: "relayed",
          decisionPolicy: "people_and_agents",
        },
      ]);
    } finally {
      await db.close();
    }
  });
});
