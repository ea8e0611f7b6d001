/**
 * Cairn's production server (`npm start`, `npm run serve`; bundled to
 * build/server.cjs by `npm run build`, so plain `node` runs it): one node:http server that
 * answers /api/mcp with the MCP route's own handler straight from Node's
 * request and response (lib/mcp/node-door.ts) and hands every other request to
 * Next, started here as `next start` would start it. Next's handling of a
 * request was about four-fifths of an MCP `ping`'s server CPU
 * (docs/performance.md, "The MCP door in front of Next"). `HOST` and `PORT`
 * choose where it listens.
 */
import { createServer } from "node:http";
import { logUnexpected, messageForLog } from "./lib/log";
import { isMcpDoorRequest, publishedMcpDoor, serveMcpDoor } from "./lib/mcp/node-door";

async function main(): Promise<void> {
  // As `next start` does; before Next is loaded, which reads it.
  (process.env as Record<string, string>).NODE_ENV ??= "production";
  const { default: next } = await import("next");
  const hostname = process.env.HOST || "127.0.0.1";
  const port = Number(process.env.PORT || 3000);
  const app = next({ dev: false, hostname, port });
  const handleWithNext = app.getRequestHandler();
  // Runs instrumentation.ts (Cairn's start: the database, the timers) before the first request.
  await app.prepare();

  const server = createServer((request, response) => {
    // The route publishes its handler when Next first loads it, so until the
    // first /api/mcp request has been served by Next, Next serves them.
    const door = isMcpDoorRequest(request) ? publishedMcpDoor() : undefined;
    if (door) {
      void serveMcpDoor(door, request, response, (error) =>
        logUnexpected("MCP request failed", error),
      );
      return;
    }
    handleWithNext(request, response).catch((error: unknown) => {
      logUnexpected("Request failed", error);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });

  let stopping = false;
  const stop = (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    // As `next start`: no new connections, the requests in flight finished,
    // then Next's own shutdown and the tool-call log's last rows (which the
    // route hands to Next's `after()` and the door does not).
    server.close(() => {
      void Promise.all([
        app.close().catch((error: unknown) => logUnexpected("Next did not close cleanly", error)),
        publishedMcpDoor()?.written(),
      ]).finally(() => process.exit(exitCode));
    });
  };
  process.on("SIGINT", () => stop(130));
  process.on("SIGTERM", () => stop(143));

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  console.log(`Cairn is listening on http://${hostname}:${port}`);
}

main().catch((error: unknown) => {
  console.error(`Cairn cannot start: ${messageForLog(error)}`);
  process.exit(1);
});
