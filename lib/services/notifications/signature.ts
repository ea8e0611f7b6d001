/**
 * Webhook signatures (docs/notifications.md): HMAC-SHA256 with the endpoint's
 * secret over `${timestamp}.${body}`, sent as `Cairn-Timestamp` (Unix seconds)
 * and `Cairn-Signature: v1=<hex>`. Signing the timestamp with the body lets a
 * receiver refuse an old delivery replayed by someone who recorded it.
 */
import "server-only";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** How old a delivery's timestamp may be before a receiver refuses it. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** A new endpoint's signing secret: 32 random bytes, with a prefix that says what it is. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/**
 * The headers of one webhook attempt, as docs/notifications.md's table of
 * headers gives them (held to it by signature.test.ts).
 */
export function webhookHeaders(
  delivery: { event: string; eventId: string; id: string; secret: string },
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    "Cairn-Event": delivery.event,
    "Cairn-Event-Id": delivery.eventId,
    "Cairn-Delivery": delivery.id,
    "Cairn-Timestamp": String(timestamp),
    "Cairn-Signature": signWebhook(delivery.secret, timestamp, body),
  };
}

/**
 * What a receiver runs on each delivery: true only when the signature matches
 * the raw body and the timestamp is within `toleranceSeconds` of `now`.
 * `signature` may carry several `v1=` values separated by commas or spaces.
 */
export function verifyWebhookSignature(input: {
  secret: string;
  body: string;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
  toleranceSeconds?: number;
  now?: Date;
}): boolean {
  const timestamp = Number(input.timestamp);
  if (!input.timestamp || !Number.isInteger(timestamp) || !input.signature) return false;
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  const tolerance = input.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(nowSeconds - timestamp) > tolerance) return false;
  const expected = Buffer.from(signWebhook(input.secret, timestamp, input.body));
  return input.signature
    .split(/[\s,]+/)
    .map((candidate) => Buffer.from(candidate))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}
