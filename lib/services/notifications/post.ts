/**
 * One webhook POST: over node:http(s) with a lookup that resolves the host and
 * checks every address (./address.ts) right before connecting, so the checked
 * address is the one used. Redirects are not followed (a 3xx is a failure), and
 * the whole exchange has a time limit. The outcome says whether the address
 * was a private one (allowed by the operator), so that the delivery log can
 * keep what such a network answered to itself.
 */
import "server-only";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { CidrRange } from "../../env";
import { isNonPublicAddress } from "../../http/non-public-address";
import { isAppError } from "../../plan-engine/app-error";
import { hostOf, parseWebhookUrl, privateRangeList, resolveWebhookHost } from "./address";

export type PostOutcome =
  /** Not sent: the URL or its addresses are refused (./address.ts), in words fit for the log. */
  | { refused: string }
  /** Sent; `private` says whether the connection went to a loopback or private address. */
  | (({ statusCode: number } | { error: string }) & { private: boolean });

export async function postWebhook(input: {
  url: string;
  body: string;
  headers: Record<string, string>;
  privateRanges: readonly CidrRange[];
  timeoutMs: number;
}): Promise<PostOutcome> {
  const allowed = privateRangeList(input.privateRanges);
  let url: URL;
  try {
    url = parseWebhookUrl(input.url, input.privateRanges.length > 0);
    // An IP literal never goes through `lookup`: check it here.
    await resolveWebhookHost(hostOf(url), allowed);
  } catch (error) {
    return { refused: isAppError(error) ? error.message : String(error) };
  }
  // A literal is known now; a name once `lookup` has resolved it.
  let isPrivate = isIP(hostOf(url)) !== 0 && isNonPublicAddress(hostOf(url));
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolveWebhookHost(hostname, allowed).then(
      (addresses) => {
        isPrivate = addresses.some((a) => isNonPublicAddress(a.address));
        if (options.all) {
          callback(null, addresses);
          return;
        }
        const wanted = options.family ? addresses.filter((a) => a.family === options.family) : [];
        const first = wanted[0] ?? addresses[0];
        if (first) callback(null, first.address, first.family);
      },
      (error: Error) => callback(Object.assign(error, { code: "EREFUSED" }), "", 0),
    );
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: { statusCode: number } | { error: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, private: isPrivate });
    };
    const request = client.request(
      url,
      {
        method: "POST",
        lookup,
        headers: {
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(input.body),
          "User-Agent": "Cairn-Webhooks/1",
          ...input.headers,
        },
      },
      (response) => {
        // The body is not read for meaning; draining it frees the socket.
        response.resume();
        response.on("end", () => finish({ statusCode: response.statusCode ?? 0 }));
        response.on("error", (error) => finish({ error: error.message }));
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new Error(`no answer within ${input.timeoutMs} ms`));
    }, input.timeoutMs);
    request.on("error", (error) => finish({ error: error.message }));
    request.end(input.body);
  });
}
