/**
 * Notifications from the production build, on PGlite and PostgreSQL 15: a plan
 * completed through /api/mcp reaches a local webhook receiver from the
 * server's own dispatcher (kicked after the call), signed with the endpoint's
 * secret; a call that fails sends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhookSignature } from "@/lib/services/notifications/signature";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhook-receiver";

// The operator's setting, for the endpoint registered here and the server
// (which inherits this environment): the receiver is on 127.0.0.1.
process.env.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES = "127.0.0.1";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(BACKENDS)("webhooks from the server on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;
  let close: () => Promise<void>;
  let received: WebhookReceiver["received"] = [];
  let url: string;
  let secret: string;

  beforeAll(async () => {
    const receiver = await startWebhookReceiver();
    received = receiver.received;
    url = receiver.url;
    close = receiver.close;

    // The endpoint is registered before the server starts: the embedded
    // database is open in one process at a time. A long timer interval shows
    // that the kick after the call, not the timer, sends the delivery.
    app = await startAppServer(backend, { env: { CAIRN_NOTIFY_INTERVAL_MS: "600000" } });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
    await close?.();
  });

  it("registers the endpoint while the server is stopped", async () => {
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      const { createWebhookEndpoint } = await import("@/lib/services/notifications/webhooks");
      const ctx = {
        db: handle.db,
        tenantId: app.tenantA.tenantId,
        actor: { type: "system" as const, id: null, label: "test" },
        stallThresholdSeconds: 1800,
      };
      ({ secret } = await createWebhookEndpoint(ctx, {
        url,
        events: ["plan.completed", "plan.failed"],
      }));
    } finally {
      await handle.close();
    }
    await app.crashAndRestart();
    await agent.close();
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });

  it("delivers plan.completed, signed, right after the call that completed the plan", async () => {
    const plan = await agent.ok("create_research_plan", {
      name: "Over MCP",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    const next = await agent.ok("get_next_step", { planId: plan.planId });
    // A call that fails after validation (wrong step) queues nothing.
    await agent.fails("submit_step_result", {
      planId: plan.planId,
      stepId: "00000000-0000-4000-8000-000000000000",
      result: { ok: true },
      stepExecutionReport: report,
    });
    const done = await agent.ok("submit_step_result", {
      planId: plan.planId,
      stepId: next.step.stepId,
      result: { ok: true },
      stepExecutionReport: report,
    });
    expect(done.planStatus).toBe("completed");
    for (let i = 0; i < 100 && received.length === 0; i += 1) await sleep(100);
    expect(received).toHaveLength(1);
    const [post] = received;
    expect(
      verifyWebhookSignature({
        secret,
        body: post?.body ?? "",
        timestamp: String(post?.headers["cairn-timestamp"]),
        signature: String(post?.headers["cairn-signature"]),
      }),
    ).toBe(true);
    expect(JSON.parse(post?.body ?? "{}")).toMatchObject({
      event: "plan.completed",
      data: { planId: plan.planId, planTitle: "Over MCP" },
    });
  });
});
