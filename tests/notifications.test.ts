/**
 * Notifications end to end in process, on PGlite and PostgreSQL 15: events
 * queued in the transaction of their change (plan.completed and plan.failed by
 * the loop itself, review.* as the reviews code and its scheduler queue them
 * (a snoozed review's return e-mailed to the snoozer), plan.cancelled by
 * cancel_plan), fanned out and
 * delivered by the dispatcher to a local HTTP receiver (signed, verifiable,
 * retried after an error, never for a rolled-back change, refused for private
 * addresses unless the operator allows their network, and then without what
 * that network answered) and to a local SMTP server (docs/notifications.md).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq, isNull } from "drizzle-orm";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { emailDeliveries, notificationEvents, users, webhookDeliveries } from "@/lib/db/schema";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createTenantUser } from "@/lib/services/accounts/create-tenant-user";
import { createUser } from "@/lib/services/accounts/create-user";
import { deleteTenantUser } from "@/lib/services/accounts/delete-tenant-user";
import { ADDRESS_REFUSAL } from "@/lib/services/notifications/address";
import {
  fanOutEvents,
  type NotifierConfig,
  runNotificationPass,
  sendDueEmails,
} from "@/lib/services/notifications/dispatcher";
import { enqueueNotification } from "@/lib/services/notifications/events";
import { mailConfig } from "@/lib/services/notifications/mail";
import { verifyWebhookSignature } from "@/lib/services/notifications/signature";
import {
  createWebhookEndpoint,
  setWebhookEndpointDisabled,
} from "@/lib/services/notifications/webhooks";
import { cancelPlan } from "@/lib/services/plans/cancel-plan";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { requestUserReview } from "@/lib/services/plans/request-user-review";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import { submitUserDecision } from "@/lib/services/plans/submit-user-decision";
import { runReviewScheduler } from "@/lib/services/reviews/review-scheduler";
import { snoozeReview } from "@/lib/services/reviews/snooze-review";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS, freshDatabase } from "./support/databases";
import { connectedAppAgent } from "./support/in-process";
import { report } from "./support/mcp-client";

// The operator's setting, read by lib/env.ts on first use: the test's receiver
// is on 127.0.0.1, and the test checks that other private networks stay refused.
process.env.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES = "127.0.0.0/8";
const LOOPBACK_ONLY = [{ network: "127.0.0.0", prefix: 8, family: "ipv4" as const }];

type Received = { path: string; headers: IncomingHttpHeaders; body: string };
type Mail = { to: string[]; raw: string };

/** A webhook receiver on 127.0.0.1 that records each POST; `answers` queues status codes to give first. */
async function startReceiver() {
  const received: Received[] = [];
  const answers: number[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", headers: request.headers, body });
      const status = answers.shift() ?? 204;
      if (status >= 300 && status < 400) response.setHeader("Location", "/redirected");
      response.statusCode = status;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    answers,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An SMTP server on 127.0.0.1 without TLS or authentication that keeps every message. */
async function startSmtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        raw += chunk;
      });
      stream.on("end", () => {
        // Undo quoted-printable's soft line breaks, so a long link reads whole.
        raw = raw.replace(/=\r\n/g, "");
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.each(BACKENDS)("notifications on %s", (backend) => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;
  let reviewer: ServiceContext;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let config: NotifierConfig;
  let researcherId: string;
  let adminEmail: string;
  let secret: string;
  const researcherEmail = `researcher-${backend}@example.com`;

  /** Runs dispatcher passes until `done` holds (deliveries are sent inside the pass). */
  async function dispatchUntil(done: () => boolean | Promise<boolean>) {
    for (let pass = 0; pass < 20; pass += 1) {
      await runNotificationPass(handle.db, config);
      if (await done()) return;
    }
    throw new Error("the dispatcher did not get there in 20 passes");
  }

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    adminEmail = `admin-${backend}@example.com`;
    const admin = await createUser(handle.db, {
      email: adminEmail,
      password: "a long enough password",
      role: "admin",
      tenant: "Notify",
    });
    const key = await createApiKey(handle.db, { email: adminEmail });
    ctx = {
      db: handle.db,
      tenantId: admin.tenantId,
      actor: { type: "api_key", id: key.apiKeyId, label: "notify agent" },
      stallThresholdSeconds: 1800,
    };
    reviewer = { ...ctx, actor: { type: "user", id: admin.userId, label: adminEmail } };
    ({ userId: researcherId } = await createTenantUser(reviewer, {
      email: researcherEmail,
      password: "a long enough password",
      role: "researcher",
    }));
    receiver = await startReceiver();
    smtp = await startSmtp();
    config = {
      mail: mailConfig(smtp.url, "Cairn <cairn@example.com>"),
      publicUrl: "https://cairn.example.com",
      timeoutMs: 5_000,
      firstRetryDelayMs: 0,
      privateRanges: LOOPBACK_ONLY,
    };
  });
  afterAll(async () => {
    await receiver?.close();
    await smtp?.close();
    await handle?.close();
  });

  it("refuses a private or unknown webhook host with one sentence, and takes one inside the ranges", async () => {
    for (const url of [
      "https://10.1.2.3/hook",
      "https://[::1]/hook",
      "https://[::127.0.0.1]/hook",
      "https://169.254.169.254/latest",
      "http://192.168.1.1/hook",
      // A name that does not resolve is answered the same: which names exist is not told.
      "https://no-such-host.invalid/hook",
    ]) {
      const refusal = createWebhookEndpoint(ctx, { url, events: ["plan.completed"] });
      await expect(refusal, url).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        message: ADDRESS_REFUSAL,
      });
    }
    const created = await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/hook`,
      events: ["plan.completed", "plan.failed", "review.requested"],
      description: "the test receiver",
    });
    expect(created.secret).toMatch(/^whsec_/);
    secret = created.secret;
  });

  it("delivers plan.completed, signed, when the last step is submitted", async () => {
    const { planId } = await createPlan(ctx, {
      name: "Completes",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    const next = await getNextStep(ctx, { planId });
    if (next.status !== "ready") throw new Error(`expected a step, got ${next.status}`);
    const done = await submitStepResult(ctx, {
      planId,
      stepId: next.step.stepId,
      result: { ok: true },
      stepExecutionReport: report,
    });
    expect(done.planStatus).toBe("completed");
    await dispatchUntil(() => receiver.received.length === 1);
    const [post] = receiver.received;
    if (!post) throw new Error("no POST");
    expect(post.path).toBe("/hook");
    expect(post.headers["cairn-event"]).toBe("plan.completed");
    expect(
      verifyWebhookSignature({
        secret,
        body: post.body,
        timestamp: String(post.headers["cairn-timestamp"]),
        signature: String(post.headers["cairn-signature"]),
      }),
    ).toBe(true);
    expect(
      verifyWebhookSignature({
        secret: "whsec_wrong",
        body: post.body,
        timestamp: String(post.headers["cairn-timestamp"]),
        signature: String(post.headers["cairn-signature"]),
      }),
    ).toBe(false);
    const body = JSON.parse(post.body);
    expect(body).toMatchObject({
      event: "plan.completed",
      id: post.headers["cairn-event-id"],
      data: { planId, planTitle: "Completes", status: "completed" },
    });
    const [delivery] = await handle.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, String(post.headers["cairn-delivery"])));
    expect(delivery).toMatchObject({ status: "delivered", attempts: 1, lastStatusCode: 204 });
  });

  it("delivers plan.failed when a reviewer rejects", async () => {
    receiver.received.length = 0;
    const { planId } = await createPlan(ctx, {
      name: "Fails",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    const next = await getNextStep(ctx, { planId });
    if (next.status !== "ready") throw new Error(`expected a step, got ${next.status}`);
    const review = await requestUserReview(ctx, {
      planId,
      stepId: next.step.stepId,
      summary: "Check this.",
    });
    const decided = await submitUserDecision(reviewer, {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "reject",
      feedback: "Wrong sources.",
    });
    expect(decided.planStatus).toBe("failed");
    // The endpoint hears every event: the review's request and the plan's end
    // (deliveries are sent side by side, so in either order).
    const events = () => receiver.received.map((r) => JSON.parse(r.body) as { event: string });
    await dispatchUntil(() => events().length === 2);
    expect(
      events()
        .map((e) => e.event)
        .sort(),
    ).toEqual(["plan.failed", "review.requested"]);
    expect(events().find((e) => e.event === "plan.failed")).toMatchObject({
      data: { planId, status: "failed" },
    });
  });

  it("retries after a receiver error, with the same delivery id", async () => {
    receiver.received.length = 0;
    receiver.answers.push(500);
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "review.requested", {
        planId: "p",
        assignedUserId: researcherId,
      }),
    );
    await dispatchUntil(() => receiver.received.length === 2);
    const [first, second] = receiver.received;
    expect(first?.headers["cairn-delivery"]).toBe(second?.headers["cairn-delivery"]);
    const [delivery] = await handle.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, String(first?.headers["cairn-delivery"])));
    expect(delivery).toMatchObject({ status: "delivered", attempts: 2, lastStatusCode: 204 });
  });

  it("with e-mail off, the pass after a call sends when its own fan-out wrote a delivery, and leaves a retry to the timer's pass", async () => {
    const mailOff: NotifierConfig = { ...config, mail: null };
    receiver.received.length = 0;
    receiver.answers.push(500);
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "plan.completed", { planId: "fan-out" }),
    );
    await runNotificationPass(handle.db, mailOff, "fan-out");
    expect(receiver.received).toHaveLength(1);
    const deliveryId = String(receiver.received[0]?.headers["cairn-delivery"]);
    const delivery = async () =>
      (
        await handle.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId))
      )[0];
    // Answered 500, so due again at once (the test's first retry delay is 0).
    expect(await delivery()).toMatchObject({ status: "pending", attempts: 1 });
    const undispatched = await handle.db
      .select()
      .from(notificationEvents)
      .where(isNull(notificationEvents.dispatchedAt));
    expect(undispatched).toEqual([]);
    // A pass after a call whose fan-out wrote nothing sends no retry...
    await runNotificationPass(handle.db, mailOff, "fan-out");
    expect(receiver.received).toHaveLength(1);
    // ...the timer's pass does.
    await runNotificationPass(handle.db, mailOff, "all");
    expect(receiver.received).toHaveLength(2);
    expect(await delivery()).toMatchObject({ status: "delivered", attempts: 2 });
  });

  it("with e-mail on, the pass after a call writes the e-mail as it stamps the event, and sends it and the webhook", async () => {
    smtp.mails.length = 0;
    receiver.received.length = 0;
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "review.requested", {
        planId: "p",
        planTitle: "Fan-out",
        assignedUserId: researcherId,
        assignedRole: null,
      }),
    );
    await runNotificationPass(handle.db, config, "fan-out");
    expect(smtp.mails.map((m) => m.to)).toEqual([[researcherEmail]]);
    expect(receiver.received.map((r) => r.headers["cairn-event"])).toEqual(["review.requested"]);
  });

  it("sends nothing for a change that was rolled back", async () => {
    receiver.received.length = 0;
    const events = async () => (await handle.db.select().from(notificationEvents)).length;
    const before = await events();
    await expect(
      handle.db.transaction(async (tx) => {
        await enqueueNotification(tx, ctx.tenantId, "plan.completed", { planId: "rolled-back" });
        throw new Error("the change failed after queuing its event");
      }),
    ).rejects.toThrow("the change failed");
    await runNotificationPass(handle.db, config);
    expect(await events()).toBe(before);
    expect(receiver.received).toEqual([]);
  });

  it("follows no redirect and gives up after the last attempt", async () => {
    receiver.received.length = 0;
    receiver.answers.push(...Array.from({ length: 8 }, () => 302));
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "plan.failed", { planId: "redirected" }),
    );
    const failed = async () =>
      (await handle.db.select().from(webhookDeliveries)).some((d) => d.status === "failed");
    await dispatchUntil(failed);
    expect(receiver.received.map((r) => r.path)).toEqual(Array.from({ length: 8 }, () => "/hook"));
    const [delivery] = (await handle.db.select().from(webhookDeliveries)).filter(
      (d) => d.status === "failed",
    );
    // The receiver is on a private address (allowed by the operator): what it
    // answered stays out of the log.
    expect(delivery).toMatchObject({ attempts: 8, lastStatusCode: null });
    expect(delivery?.lastError).toContain("did not accept the delivery");
  });

  it("checks the address again at delivery time", async () => {
    receiver.received.length = 0;
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "plan.completed", { planId: "private-now" }),
    );
    // The operator has since taken the range out of CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES:
    // the receiver's http:// URL is refused before any connection, at every attempt.
    const refused = async () =>
      (await handle.db.select().from(webhookDeliveries)).some(
        (d) => d.lastError === "A webhook URL must start with https://." && d.status === "failed",
      );
    const withoutRanges = { ...config, privateRanges: [] };
    for (let pass = 0; pass < 20 && !(await refused()); pass += 1) {
      await runNotificationPass(handle.db, withoutRanges);
    }
    expect(await refused()).toBe(true);
    expect(receiver.received).toEqual([]);
  });

  it("logs a failed private delivery as not accepted, without what the network answered", async () => {
    const closedPort = await createWebhookEndpoint(ctx, {
      url: "http://127.0.0.1:1/hook",
      events: ["plan.stalled"],
    });
    const forbidden = await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/forbidden`,
      events: ["plan.stalled"],
    });
    receiver.answers.push(403);
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "plan.stalled", { planId: "probe" }),
    );
    // Each endpoint's first failure, as the log showed it (the 403's retry then succeeds).
    const failures = new Map<string, { lastError: string | null; lastStatusCode: number | null }>();
    await dispatchUntil(async () => {
      for (const delivery of await handle.db.select().from(webhookDeliveries)) {
        const probed = [closedPort.endpointId, forbidden.endpointId].includes(delivery.endpointId);
        if (probed && delivery.lastError !== null && !failures.has(delivery.endpointId)) {
          failures.set(delivery.endpointId, delivery);
        }
      }
      return failures.size === 2;
    });
    for (const failure of failures.values()) {
      expect(failure.lastStatusCode).toBeNull();
      expect(failure.lastError).toBe(
        "The private address did not accept the delivery (what it answered is not shown).",
      );
    }
    for (const endpointId of [closedPort.endpointId, forbidden.endpointId]) {
      await setWebhookEndpointDisabled(ctx, { endpointId, disabled: true });
    }
  });

  it("e-mails the assignee, or the team, with a link, and honours the opt-out", async () => {
    // The retry test's review.requested was e-mailed too.
    smtp.mails.length = 0;
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "review.requested", {
        reviewRequestId: "00000000-0000-4000-8000-000000000000",
        planId: "11111111-1111-4111-8111-111111111111",
        planTitle: "Coffee and sleep",
        summary: "Are these sources enough?",
        assignedUserId: researcherId,
        assignedRole: null,
      }),
    );
    await dispatchUntil(() => smtp.mails.length === 1);
    const [mail] = smtp.mails;
    expect(mail?.to).toEqual([researcherEmail]);
    expect(mail?.raw).toContain("Review requested: Coffee and sleep");
    expect(mail?.raw).toContain(
      "https://cairn.example.com/plans/11111111-1111-4111-8111-111111111111",
    );

    // The researcher turns e-mails off; a review for the whole team reaches the admin only.
    await handle.db
      .update(users)
      .set({ emailNotifications: false })
      .where(eq(users.id, researcherId));
    smtp.mails.length = 0;
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "review.due_soon", {
        planId: "p",
        planTitle: "Team review",
        assignedUserId: null,
        assignedRole: null,
      }),
    );
    await dispatchUntil(() => smtp.mails.length === 1);
    expect(smtp.mails.map((m) => m.to)).toEqual([[adminEmail]]);
    const sent = await handle.db.select().from(emailDeliveries);
    expect(sent.every((e) => e.status === "delivered")).toBe(true);
    expect(new Set(sent.map((e) => e.toAddress))).toEqual(new Set([adminEmail, researcherEmail]));
  });

  it("sends nothing to a person deleted after the e-mail was queued", async () => {
    const { userId } = await createTenantUser(reviewer, {
      email: `leaving-${backend}@example.com`,
      password: "a long enough password",
      role: "researcher",
    });
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "review.requested", {
        planId: "p",
        planTitle: "Leaving",
        assignedUserId: userId,
        assignedRole: null,
      }),
    );
    await fanOutEvents(handle.db, config);
    const [queued] = await handle.db
      .select()
      .from(emailDeliveries)
      .where(eq(emailDeliveries.userId, userId));
    expect(queued?.status).toBe("pending");
    await deleteTenantUser(reviewer, { userId });
    smtp.mails.length = 0;
    await sendDueEmails(handle.db, config);
    const [dropped] = await handle.db
      .select()
      .from(emailDeliveries)
      .where(eq(emailDeliveries.id, queued?.id ?? ""));
    expect(dropped).toMatchObject({ status: "failed", userId: null });
    expect(dropped?.lastError).toContain("deleted");
    expect(smtp.mails).toEqual([]);
  });

  it("writes no deliveries for a disabled endpoint", async () => {
    const endpoints = await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/other`,
      events: ["plan.stalled"],
    });
    await setWebhookEndpointDisabled(ctx, { endpointId: endpoints.endpointId, disabled: true });
    await handle.db.transaction((tx) =>
      enqueueNotification(tx, ctx.tenantId, "plan.stalled", { planId: "p" }),
    );
    await runNotificationPass(handle.db, config);
    const rows = await handle.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpoints.endpointId));
    expect(rows).toEqual([]);
  });
  it("a review with a deadline: the assignee is e-mailed and the webhook fires; nobody answers, Cairn skips the step, and both hear it", async () => {
    receiver.received.length = 0;
    smtp.mails.length = 0;
    await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/reviews`,
      events: ["review.requested", "review.timed_out"],
    });
    const { planId } = await createPlan(ctx, {
      name: "Deadline",
      researchQuestion: "q",
      steps: [
        { stepType: "search", instructions: "Look." },
        { stepType: "analyze", instructions: "Then think." },
      ],
    });
    const first = await getNextStep(ctx, { planId });
    if (first.status !== "ready") throw new Error(`expected a step, got ${first.status}`);
    await requestUserReview(ctx, {
      planId,
      stepId: first.step.stepId,
      summary: "Is this enough?",
      deadlineSeconds: 1,
      onTimeout: "skip",
      assignTo: adminEmail,
    });
    const posts = (event: string) =>
      receiver.received.filter((r) => r.path === "/reviews" && r.headers["cairn-event"] === event);
    await dispatchUntil(() => posts("review.requested").length === 1 && smtp.mails.length === 1);
    expect(smtp.mails[0]?.to).toEqual([adminEmail]);
    expect(smtp.mails[0]?.raw).toContain(`https://cairn.example.com/plans/${planId}`);

    // Nobody answers: once the deadline has passed, Cairn's scheduler skips the step.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await runReviewScheduler(handle.db, { stallThresholdSeconds: 1800 })).toMatchObject({
      applied: 1,
    });
    const next = await getNextStep(ctx, { planId });
    if (next.status !== "ready") throw new Error(`expected the next step, got ${next.status}`);
    expect(next.step.stepId).not.toBe(first.step.stepId);
    expect(next.reviewTimedOut).toMatchObject({ action: "skip", stepId: first.step.stepId });

    await dispatchUntil(() => posts("review.timed_out").length === 1 && smtp.mails.length === 2);
    const timedOut = JSON.parse(posts("review.timed_out")[0]?.body ?? "{}");
    expect(timedOut).toMatchObject({ event: "review.timed_out", data: { planId, action: "skip" } });
    expect(smtp.mails[1]?.to).toEqual([adminEmail]);
  });

  it("a snoozed review comes back: the webhook fires, and only the snoozer is e-mailed, whoever it is assigned to", async () => {
    receiver.received.length = 0;
    smtp.mails.length = 0;
    await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/snoozes`,
      events: ["review.snooze_returned"],
    });
    const snoozerEmail = `snoozer-${backend}@example.com`;
    const { userId: snoozerId } = await createTenantUser(reviewer, {
      email: snoozerEmail,
      password: "a long enough password",
      role: "researcher",
    });
    const snoozer = {
      ...ctx,
      actor: { type: "user" as const, id: snoozerId, label: snoozerEmail },
    } satisfies ServiceContext;
    const { planId } = await createPlan(ctx, {
      name: "Snoozed",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    const first = await getNextStep(ctx, { planId });
    if (first.status !== "ready") throw new Error(`expected a step, got ${first.status}`);
    const { reviewRequestId } = await requestUserReview(ctx, {
      planId,
      stepId: first.step.stepId,
      summary: "Look at this later.",
      assignTo: adminEmail,
    });
    // Two seconds on, to the second, on a UTC clock: the next whole second at least a second away.
    const at = new Date(Date.now() + 2_000).toISOString().slice(0, 19);
    const { until } = await snoozeReview(snoozer, {
      reviewRequestId,
      until: "at",
      at,
      timeZone: "UTC",
    });
    await new Promise((resolve) => setTimeout(resolve, Date.parse(until) - Date.now() + 100));
    expect(await runReviewScheduler(handle.db, { stallThresholdSeconds: 1800 })).toMatchObject({
      snoozesReturned: 1,
    });
    const posts = () => receiver.received.filter((r) => r.path === "/snoozes");
    const returnMails = () => smtp.mails.filter((m) => m.raw.includes("Snoozed review back"));
    await dispatchUntil(() => posts().length === 1 && returnMails().length === 1);
    expect(JSON.parse(posts()[0]?.body ?? "{}")).toMatchObject({
      event: "review.snooze_returned",
      data: {
        reviewRequestId,
        planId,
        assignedUserEmail: adminEmail,
        snoozedUserId: snoozerId,
        snoozedUntil: until,
      },
    });
    expect(returnMails().map((m) => m.to)).toEqual([[snoozerEmail]]);
    expect(returnMails()[0]?.raw).toContain("The review you snoozed is back in your inbox.");
    expect(returnMails()[0]?.raw).toContain("because you snoozed this review");
  });

  it("cancelling a plan tells the webhooks who cancelled it and why, and e-mails whoever started it unless they opted out", async () => {
    receiver.received.length = 0;
    await createWebhookEndpoint(ctx, {
      url: `${receiver.url}/cancelled`,
      events: ["plan.cancelled"],
    });
    const ownerEmail = `owner-${backend}@example.com`;
    const { userId: ownerId } = await createTenantUser(reviewer, {
      email: ownerEmail,
      password: "a long enough password",
      role: "researcher",
    });
    const owner = {
      ...ctx,
      actor: { type: "user" as const, id: ownerId, label: ownerEmail },
    } satisfies ServiceContext;
    const startPlan = async (name: string) =>
      (
        await createPlan(owner, {
          name,
          researchQuestion: "q",
          steps: [{ stepType: "search", instructions: "Look." }],
        })
      ).planId;
    const cancelled = () =>
      receiver.received
        .filter((r) => r.path === "/cancelled")
        .map((r) => JSON.parse(r.body) as { event: string; data: Record<string, unknown> });
    const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address));

    const planId = await startPlan("Cancelled");
    await cancelPlan(ctx, { planId, reason: "The question was answered elsewhere" });
    await dispatchUntil(() => cancelled().length === 1 && mailsTo(ownerEmail).length === 1);
    expect(cancelled()[0]).toMatchObject({
      event: "plan.cancelled",
      data: {
        planId,
        planTitle: "Cancelled",
        status: "cancelled",
        cancelledBy: "notify agent",
        reason: "The question was answered elsewhere",
      },
    });
    const [mail] = mailsTo(ownerEmail);
    expect(mail?.raw).toContain("Plan cancelled: Cancelled");
    expect(mail?.raw).toContain("Cancelled by notify agent: The question was answered elsewhere");
    expect(mail?.raw).toContain(`https://cairn.example.com/plans/${planId}`);

    // A plan the owner started through a connected app (OAuth) is theirs too.
    const { agent: ownersApp } = await connectedAppAgent(handle.db, owner, "Owner's assistant");
    const viaApp = await ownersApp.ok("create_research_plan", {
      name: "Started in a connected app",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "Look." }],
    });
    await cancelPlan(ctx, { planId: viaApp.planId, reason: "Covered elsewhere" });
    await dispatchUntil(() => cancelled().length === 2 && mailsTo(ownerEmail).length === 2);
    expect(mailsTo(ownerEmail)[1]?.raw).toContain("Plan cancelled: Started in a connected app");

    // The owner turns e-mails off: the webhook still hears of the next cancel, nobody is e-mailed.
    await handle.db.update(users).set({ emailNotifications: false }).where(eq(users.id, ownerId));
    const quiet = await startPlan("Cancelled quietly");
    await cancelPlan(owner, { planId: quiet, reason: "Not needed" });
    await dispatchUntil(() => cancelled().length === 3);
    expect(cancelled()[2]).toMatchObject({
      data: { planId: quiet, cancelledBy: ownerEmail, reason: "Not needed" },
    });
    const events = await handle.db
      .select({ id: notificationEvents.id })
      .from(notificationEvents)
      .where(eq(notificationEvents.event, "plan.cancelled"));
    const mailed = await handle.db.select().from(emailDeliveries);
    expect(mailed.filter((e) => events.some((event) => event.id === e.eventId))).toHaveLength(2);
    expect(mailsTo(ownerEmail)).toHaveLength(2);
  });
});
