/**
 * A browser-based MCP host on another site (like the ext-apps basic host) calls
 * /api/mcp from its page: answered with CORS headers for the origins an admin
 * lists in CAIRN_MCP_CORS_ORIGINS, and kept out by the browser otherwise.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AppServer, startAppServer } from "../tests/support/app-server";
import { expect, watchedTest } from "./fixtures";

/** A page with nothing on it: the host's origin, from which the test calls Cairn. */
async function servePage(): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "Content-Type": "text/html" });
    response.end("<!doctype html><title>Browser MCP host</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const test = watchedTest.extend<
  object,
  { hostPage: { server: Server; port: number }; app: AppServer }
>({
  hostPage: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixtures must destructure their dependencies, here none
    async ({}, use) => {
      const page = await servePage();
      await use(page);
      page.server.close();
    },
    { scope: "worker" },
  ],
  app: [
    async ({ hostPage }, use) => {
      // Listed by the name "localhost"; the same page reached as 127.0.0.1 is another origin.
      const app = await startAppServer("postgres", {
        env: { CAIRN_MCP_CORS_ORIGINS: `http://localhost:${hostPage.port}` },
      });
      await use(app);
      await app.stop();
    },
    { scope: "worker", timeout: 120_000 },
  ],
});

/**
 * What the host's page does: an MCP request with the key in the Authorization
 * header. Run in the page (page.evaluate), so it names nothing outside itself.
 */
function callFromPage({ mcpUrl, key, body }: { mcpUrl: string; key: string; body: object }) {
  return fetch(mcpUrl, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": "2025-11-25",
    },
    body: JSON.stringify(body),
  }).then(async (response) => ({ status: response.status, text: await response.text() }));
}

test("a listed browser host initializes and lists the tools; an unlisted origin's page is kept out", async ({
  page,
  app,
  hostPage,
  allowConsoleError,
}) => {
  await page.goto(`http://localhost:${hostPage.port}/`);
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "browser-host", version: "1.0.0" },
    },
  };
  const asAlpha = (body: object) => ({ mcpUrl: app.mcpUrl, key: app.tenantA.key, body });
  const initialized = await page.evaluate(callFromPage, asAlpha(initialize));
  expect(initialized.status).toBe(200);
  expect(initialized.text).toContain('"serverInfo"');
  const listed = await page.evaluate(
    callFromPage,
    asAlpha({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  );
  expect(listed.status).toBe(200);
  expect(listed.text).toContain('"get_next_step"');

  // The same page under another name: its preflight gets no CORS headers, so the browser refuses.
  allowConsoleError(/CORS policy/);
  allowConsoleError(/Failed to load resource: net::ERR_FAILED/);
  await page.goto(`http://127.0.0.1:${hostPage.port}/`);
  await expect(page.evaluate(callFromPage, asAlpha(initialize))).rejects.toThrow(/Failed to fetch/);
});
