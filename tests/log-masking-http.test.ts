/**
 * Failed statements in the production build's log (docs/operations.md, lib/log.ts),
 * on PGlite and PostgreSQL 15: with a column of the server's database renamed
 * under it, a tool call, a resource read on revision 2026-07-28 and an API
 * key's check all fail, and neither the server's log nor the client's answer
 * holds the statement or its values (the key's hash, the plan's text): only
 * the SQLSTATE code and PostgreSQL's message with quoted names masked.
 */
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectModernAgent } from "./support/mcp-client";

const MARKER = "a-question-only-the-database-saw-7f3a";

/** What a failed statement would have left: drizzle's text, the statement, its values. */
const STATEMENT_TRACES = [/Failed query/, /params:/, /"research_plan"/, /"api_key"/];

describe.each(BACKENDS)("failed statements in the production log (%s)", (backend) => {
  let app: AppServer;

  /** Stops the server, runs `statement` on its database, and starts it again. */
  async function alterWhileStopped(statement: string) {
    await app.stopServer();
    const handle = await app.openDatabase();
    try {
      await handle.db.execute(sql.raw(statement));
    } finally {
      await handle.close();
    }
    await app.startServer();
  }

  beforeAll(async () => {
    app = await startAppServer(backend);
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("a tool call and a resource read on a broken table: masked in the log, no internals to the client", async () => {
    await alterWhileStopped(
      "alter table research_plan rename column research_question to research_question_gone",
    );
    const agent = await connectModernAgent(app.mcpUrl, app.tenantA.key);
    try {
      const failed = await agent.call("create_research_plan", {
        name: "Broken",
        researchQuestion: MARKER,
        steps: [{ stepType: "search", instructions: "Look." }],
      });
      expect(failed.isError).toBe(true);
      expect(failed.text).toMatch(/^INTERNAL_ERROR: /);
      const read = await agent.client.readResource({ uri: "cairn://plans/active" }).then(
        () => "answered",
        (error: Error) => error.message,
      );
      expect(read).toMatch(/Cairn could not complete this request/);
      for (const trace of STATEMENT_TRACES) expect(read).not.toMatch(trace);
    } finally {
      await agent.close();
    }
    const log = app.serverOutput();
    expect(log).toContain("Unexpected error in an MCP tool: a database query failed (42703)");
    expect(log).toContain("Unexpected error in an MCP request: a database query failed (42703)");
    expect(log).not.toContain(MARKER);
    for (const trace of STATEMENT_TRACES) expect(log).not.toMatch(trace);
  });

  it("an API key's check on a broken table: its hash is not in the log", async () => {
    await alterWhileStopped("alter table api_key rename column key_hash to key_hash_gone");
    const response = await fetch(app.mcpUrl, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${app.tenantA.key}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(response.status).toBe(500);
    const hash = createHash("sha256").update(app.tenantA.key).digest("hex");
    const answer = await response.text();
    const log = app.serverOutput();
    expect(log).toContain("Could not check an API key: a database query failed (42703)");
    for (const text of [log, answer]) {
      expect(text).not.toContain(hash);
      expect(text).not.toContain(app.tenantA.key);
      for (const trace of STATEMENT_TRACES) expect(text).not.toMatch(trace);
    }
  });
});
