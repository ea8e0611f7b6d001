import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../../docs-table";
import { newWebhookSecret, signWebhook, verifyWebhookSignature, webhookHeaders } from "./signature";

describe("webhook signatures", () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ event: "plan.completed", data: { planId: "p" } });
  const now = new Date("2026-11-23T12:00:00Z");
  const timestamp = Math.floor(now.getTime() / 1000);
  const signature = signWebhook(secret, timestamp, body);

  it("verifies what it signed", () => {
    expect(signature).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(
      verifyWebhookSignature({ secret, body, timestamp: String(timestamp), signature, now }),
    ).toBe(true);
  });

  it("refuses another body, secret or timestamp", () => {
    const base = { secret, body, timestamp: String(timestamp), signature, now };
    expect(verifyWebhookSignature({ ...base, body: `${body} ` })).toBe(false);
    expect(verifyWebhookSignature({ ...base, secret: newWebhookSecret() })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: String(timestamp + 1) })).toBe(false);
    expect(verifyWebhookSignature({ ...base, signature: null })).toBe(false);
    expect(verifyWebhookSignature({ ...base, timestamp: "soon" })).toBe(false);
  });

  it("refuses a replay older than the tolerance, and accepts one of several signatures", () => {
    const later = new Date(now.getTime() + 301_000);
    expect(
      verifyWebhookSignature({ secret, body, timestamp: String(timestamp), signature, now: later }),
    ).toBe(false);
    expect(
      verifyWebhookSignature({
        secret,
        body,
        timestamp: String(timestamp),
        signature: `v1=${"0".repeat(64)}, ${signature}`,
        now,
      }),
    ).toBe(true);
  });
});

describe("a webhook's headers", () => {
  it("are those docs/notifications.md's table gives, in its order", () => {
    const delivery = { event: "plan.completed", eventId: "e-1", id: "d-1", secret: "whsec_x" };
    const headers = webhookHeaders(delivery, 1_700_000_000, "{}");
    const documented = docTable("docs/notifications.md", "Header").map(([name = ""]) =>
      codeNames(name).join(),
    );
    expect(documented).toEqual(Object.keys(headers));
    expect(headers["Cairn-Signature"]).toBe(signWebhook("whsec_x", 1_700_000_000, "{}"));
  });
});
