/**
 * Stamps every HTTP request this process serves with its connection's address,
 * under a header whose name is random per process (see lib/auth/client-address.ts):
 * Next.js hands pages and actions the request's headers, never its socket. Any
 * header of that name a client sends is overwritten, and a client cannot guess
 * the name anyway. Installed once, at start (instrumentation.ts), before the
 * server answers its first request.
 */
import { randomBytes } from "node:crypto";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { peerAddressHeaderName, setPeerAddressHeaderName } from "./auth/client-address";

type Emit = (this: unknown, event: string | symbol, ...args: unknown[]) => boolean;

export function installPeerAddressHeader(): void {
  if (peerAddressHeaderName()) return;
  const name = `x-cairn-peer-${randomBytes(12).toString("hex")}`;
  for (const Server of [http.Server, https.Server]) {
    const prototype = Server.prototype as unknown as { emit: Emit };
    const original = prototype.emit;
    prototype.emit = function emit(this: unknown, event, ...args) {
      if (event === "request") {
        const request = args[0] as IncomingMessage | undefined;
        if (request?.headers) request.headers[name] = request.socket?.remoteAddress ?? "";
      }
      return original.call(this, event, ...args);
    };
  }
  setPeerAddressHeaderName(name);
}
