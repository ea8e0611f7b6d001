/**
 * A local webhook receiver on 127.0.0.1 for tests of the server's own
 * dispatcher: it answers every POST with 200 and keeps what it was sent.
 * (Its address is private: the server must be given
 * CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES=127.0.0.1.)
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export type WebhookReceiver = {
  url: string;
  /** Every POST so far, in order of arrival. */
  received: { headers: IncomingHttpHeaders; body: string }[];
  close(): Promise<void>;
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceiver["received"] = [];
  const receiver = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      response.statusCode = 200;
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => receiver.close(() => resolve())),
  };
}
