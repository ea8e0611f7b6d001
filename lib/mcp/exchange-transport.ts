/**
 * The 2025-era leg's transport: stateless Streamable HTTP in JSON mode, as the
 * SDK's `WebStandardStreamableHTTPServerTransport` serves it with
 * `sessionIdGenerator: undefined` and `enableJsonResponse: true`, but connected
 * to its pooled server once rather than built, connected and closed for every
 * request. That transport refuses a second request, so the route paid for a
 * new one, the protocol's connect and its close (with the close's teardown of
 * every map it keeps) on every call, and for the checks and `Response` objects
 * of a general transport (sessions, event streams, resumption, batches) that a
 * stateless JSON exchange never uses: about half of a `ping`'s CPU in the
 * route (docs/performance.md, "One transport per pooled server").
 *
 * One exchange at a time: the route takes a pooled server for a request and
 * puts it back when the answer is in, so a JSON-RPC id never meets another
 * caller's. What the SDK's transport answers for each request is kept, in its
 * order and with its words: a client that does not accept both JSON and event
 * streams (406), a body that is not JSON (415), a message that is not JSON-RPC
 * (400, -32700), a revision header the server does not speak (400), and
 * notifications and responses only (202, no body). The front door has already
 * refused batches, bodies too large and bodies that are not JSON.
 */
import {
  type AuthInfo,
  isInitializeRequest,
  isJSONRPCRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type JSONRPCResponse,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
} from "@modelcontextprotocol/server";
import { type HeaderReader, type JsonAnswer, jsonRpcError, type McpAnswer } from "./front-door";

type RequestId = string | number;

/** A response (result or error) rather than a request or notification: it has no method. */
function isResponse(message: JSONRPCMessage): message is JSONRPCResponse {
  return !("method" in message);
}

export class ExchangeTransport implements Transport {
  onmessage?: Transport["onmessage"];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private supportedVersions: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;
  /** The request of the exchange in progress, and where its answer goes. */
  private waiting: { id: RequestId; answer: (answer: JsonAnswer) => void } | undefined;

  /** Called by the protocol's connect with the versions its server speaks. */
  setSupportedProtocolVersions(versions: string[]): void {
    this.supportedVersions = versions;
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /**
   * The server's messages: the answer to the exchange's request is its
   * response; anything else (a notification, a request to the client) has no
   * way to the client in a stateless JSON exchange, and is dropped, as the
   * SDK's transport drops it in JSON mode.
   */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!isResponse(message)) return;
    const waiting = this.waiting;
    if (waiting === undefined || waiting.id !== message.id) {
      throw new Error(`No connection established for request ID: ${String(message.id)}`);
    }
    this.waiting = undefined;
    waiting.answer({ status: 200, json: JSON.stringify(message) });
  }

  /**
   * One POST: its one message (parsed by the front door) handed to the server,
   * answered with the server's response to it, or 202 for a notification or
   * a response.
   */
  exchange(
    headers: HeaderReader,
    body: unknown,
    authInfo: AuthInfo,
  ): Promise<McpAnswer> | McpAnswer {
    if (this.waiting !== undefined) {
      throw new Error("An exchange is already in progress on this transport.");
    }
    const accept = headers.get("accept");
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return jsonRpcError(
        406,
        -32000,
        "Not Acceptable: Client must accept both application/json and text/event-stream",
      );
    }
    if (!isJsonContentType(headers.get("content-type"))) {
      return jsonRpcError(
        415,
        -32000,
        "Unsupported Media Type: Content-Type must be application/json",
      );
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      return jsonRpcError(400, -32700, "Parse error: Invalid JSON-RPC message");
    }
    const version = headers.get("mcp-protocol-version");
    // The SDK's own tests of a message's kind, so a message is what its
    // protocol layer will take it for (one that looks like a request but is not
    // one gets no answer, and must not be waited on).
    const initialize =
      "method" in message && message.method === "initialize" && isInitializeRequest(message);
    if (!initialize && version !== null && !this.supportedVersions.includes(version)) {
      return jsonRpcError(
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${this.supportedVersions.join(", ")})`,
      );
    }
    // Only the caller: Cairn's handlers read nothing else of the HTTP request
    // (the SDK's `ctx.http.req` stays unset on this leg).
    const extra = { authInfo };
    if (!isJSONRPCRequest(message)) {
      this.onmessage?.(message, extra);
      return new Response(null, { status: 202 });
    }
    const { id } = message;
    return new Promise((answer) => {
      this.waiting = { id, answer };
      this.onmessage?.(message, extra);
    });
  }
}
