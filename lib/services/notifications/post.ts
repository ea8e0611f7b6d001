/**
 * One webhook POST: over node:http(s) with a lookup that resolves the host and
 * checks every address (./address.ts) right before connecting, so the checked
 * address is the one used. Redirects are not followed (a 3xx is a failure), and
 * the whole exchange has a time limit.
 */
import "server-only";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isAppError } from "../../plan-engine/app-error";
import { hostOf, parseWebhookUrl, resolveWebhookHost } from "./address";

export type PostOutcome = { statusCode: number } | { error: string };

export async function postWebhook(input: {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs: number;
}): Promise<PostOutcome> {
  let url: URL;
  try {
    url = parseWebhookUrl(input.url, input.allowPrivate);
    // An IP literal never goes through `lookup`: check it here.
    await resolveWebhookHost(hostOf(url), input.allowPrivate);
  } catch (error) {
    return { error: isAppError(error) ? error.message : String(error) };
  }
  const lookup: LookupFunction = (hostname, options, callback) => {
    resolveWebhookHost(hostname, input.allowPrivate).then(
      (addresses) => {
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
    const finish = (outcome: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
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
