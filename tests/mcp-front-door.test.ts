/**
 * The MCP route's front door and its answers to bad input: authentication,
 * DNS-rebinding protection, body limits, malformed JSON, and a clear error for
 * every tool given wrong arguments, never an HTTP 500, a hang or a partial write.
 * Ends with the official MCP conformance suite's server requirements for
 * revisions 2025-11-25 and 2026-07-28.
 */
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";

const INIT = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "raw-http", version: "1" },
  },
};

function post(
  app: AppServer,
  body: BodyInit,
  headers: Record<string, string> = {},
  path = "/api/mcp",
) {
  return fetch(`${app.url}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body,
    signal: AbortSignal.timeout(15_000),
    // Needed for a streamed body.
    ...({ duplex: "half" } as object),
  });
}

/**
 * RFC 6750: no credentials, a challenge with no error; a key that matches
 * nothing, invalid_token. Both name the OAuth protected-resource metadata
 * (RFC 9728), where an OAuth client starts.
 */
function metadataParams(app: AppServer): string {
  return `resource_metadata="${app.url}/.well-known/oauth-protected-resource/api/mcp", scope="mcp"`;
}
const noKeyChallenge = (app: AppServer) => `Bearer ${metadataParams(app)}`;
const invalidKeyChallenge = (app: AppServer) =>
  `Bearer error="invalid_token", error_description="invalid, expired or revoked token", ${metadataParams(app)}`;

type RawAnswer = { status: number; headers: Record<string, string>; body: string };

/**
 * POSTs a body that never ends (chunked, with no last chunk): the start of a
 * JSON-RPC message, then, with `flood`, 64 KB chunks as fast as the socket
 * takes them; without, nothing more. Resolves with the answer's head as soon as
 * it arrives, then drops the connection.
 *
 * A raw socket rather than node:http's client: a server that answers before
 * the body ends closes the connection, and the client's next write then fails
 * with EPIPE or ECONNRESET, which node:http reports as the request's error, at
 * times before the answer it had already received. Here a failed write is only
 * the end of sending; the answer is read from the socket either way.
 */
function postEndlessBody(
  app: AppServer,
  headers: Record<string, string>,
  flood: boolean,
): Promise<RawAnswer> {
  const url = new URL(app.url);
  const chunk = Buffer.alloc(64 * 1024, " ");
  const framed = (data: string | Buffer) =>
    Buffer.concat([
      Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n`),
      Buffer.from(data),
      Buffer.from("\r\n"),
    ]);
  return new Promise((resolve, reject) => {
    let received = "";
    let answered = false;
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("no answer within 10 s while the body was still being sent"));
    }, 10_000);
    const answerIfComplete = () => {
      const headEnd = received.indexOf("\r\n\r\n");
      if (answered || headEnd < 0) return;
      answered = true;
      clearTimeout(timer);
      socket.destroy();
      const [statusLine = "", ...lines] = received.slice(0, headEnd).split("\r\n");
      const answerHeaders: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(":");
        answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(" ")[1]),
        headers: answerHeaders,
        body: received.slice(headEnd + 4),
      });
    };
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1");
      answerIfComplete();
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // The server answered and closed while the body was still being sent.
      if (error.code === "EPIPE" || error.code === "ECONNRESET") return;
      if (answered) return;
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      if (answered) return;
      clearTimeout(timer);
      reject(new Error(`the connection closed without an answer (received: ${received})`));
    });
    const head = {
      Host: url.host,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "Transfer-Encoding": "chunked",
      ...headers,
    };
    socket.write(
      `POST /api/mcp HTTP/1.1\r\n${Object.entries(head)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("")}\r\n`,
    );
    socket.write(framed(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"padding":"`));
    if (flood) {
      const pump = () => {
        while (!answered && !socket.destroyed && socket.write(framed(chunk))) {}
      };
      socket.on("drain", pump);
      pump();
    }
  });
}

describe("the front door of /api/mcp", () => {
  let app: AppServer;
  let auth: Record<string, string>;

  beforeAll(async () => {
    app = await startAppServer("pglite");
    auth = { Authorization: `Bearer ${app.tenantA.key}` };
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("answers a valid key and refuses a missing, wrong or revoked one with 401", async () => {
    expect((await post(app, JSON.stringify(INIT), auth)).status).toBe(200);
    const cases: [Record<string, string>, string][] = [
      [{}, noKeyChallenge(app)],
      [{ Authorization: "Bearer" }, noKeyChallenge(app)],
      [{ Authorization: `Basic ${app.tenantA.key}` }, noKeyChallenge(app)],
      [{ Authorization: "Bearer cairn_not-a-real-key" }, invalidKeyChallenge(app)],
      [{ Authorization: `Bearer ${app.revokedKey}` }, invalidKeyChallenge(app)],
      [{ Authorization: `bearer ${app.revokedKey}` }, invalidKeyChallenge(app)],
    ];
    for (const [headers, challenge] of cases) {
      const response = await post(app, JSON.stringify(INIT), headers);
      const label = JSON.stringify(headers);
      expect(response.status, label).toBe(401);
      expect(response.headers.get("www-authenticate"), label).toBe(challenge);
      expect(await response.json(), label).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { message: expect.stringMatching(/^Unauthorized: /) },
      });
    }
  });

  it("names no URL in a 401 that answers 404 (the OAuth metadata it names is served)", async () => {
    const refusals = [
      await post(app, JSON.stringify(INIT), {}),
      await post(app, JSON.stringify(INIT), { Authorization: "Bearer cairn_not-a-real-key" }),
      await post(app, JSON.stringify(INIT), { Authorization: `Bearer ${app.revokedKey}` }),
      await post(app, JSON.stringify(INIT), {}, `/api/mcp?api_key=${app.tenantA.key}`),
    ];
    for (const response of refusals) {
      expect(response.status).toBe(401);
      const challenge = response.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/resource_metadata="/);
      const named = `${challenge} ${await response.text()}`.match(/https?:\/\/[^\s",]+/g) ?? [];
      for (const url of named) {
        const target = await fetch(url, { signal: AbortSignal.timeout(15_000) });
        await target.body?.cancel();
        expect(target.status, url).not.toBe(404);
      }
    }
  });

  // The body sends one fragment and then nothing, so it never ends: any answer
  // at all shows the key was checked before the body was read. (A flooding body
  // is not used here: the client's writes race the server closing the socket
  // after its 401, and the answer can be lost to EPIPE.)
  it("answers a missing or wrong key before reading the body, even one that never ends", async () => {
    const none = await postEndlessBody(app, {}, false);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toBe(noKeyChallenge(app));
    const wrong = await postEndlessBody(
      app,
      { Authorization: "Bearer cairn_not-a-real-key" },
      false,
    );
    expect(wrong.status).toBe(401);
    expect(wrong.headers["www-authenticate"]).toBe(invalidKeyChallenge(app));
    // The same endless body with a valid key is read, up to the limit: a flood
    // gets 413 there, so the 401s above came before the body was read.
    expect((await postEndlessBody(app, auth, true)).status).toBe(413);
  });

  it("never accepts a key in the query string", async () => {
    for (const query of ["api_key", "key", "token", "access_token"]) {
      const response = await post(
        app,
        JSON.stringify(INIT),
        {},
        `/api/mcp?${query}=${app.tenantA.key}`,
      );
      expect(response.status, query).toBe(401);
      expect(response.headers.get("www-authenticate"), query).toBe(noKeyChallenge(app));
    }
  });

  it("refuses a foreign Origin or Host with 403 (DNS rebinding) and accepts loopback ones", async () => {
    expect(
      (await post(app, JSON.stringify(INIT), { ...auth, Origin: "http://evil.example" })).status,
    ).toBe(403);
    expect((await post(app, JSON.stringify(INIT), { ...auth, Origin: "null" })).status).toBe(403);
    expect(
      (await post(app, JSON.stringify(INIT), { ...auth, Origin: `http://localhost:${app.port}` }))
        .status,
    ).toBe(200);
    const raw = spawnSync("curl", [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-X",
      "POST",
      "-H",
      "Host: evil.example",
      "-H",
      "Content-Type: application/json",
      "-H",
      `Authorization: Bearer ${app.tenantA.key}`,
      "--data",
      JSON.stringify(INIT),
      `${app.url}/api/mcp`,
    ]);
    expect(raw.stdout.toString()).toBe("403");
  });

  it("answers malformed JSON at once with a JSON-RPC parse error", async () => {
    for (const body of ["{bad", "", '{"jsonrpc": "2.0",']) {
      const response = await post(app, body, auth);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700 },
      });
    }
  });

  it("answers JSON that is not JSON-RPC at once, never with a 500", async () => {
    for (const body of ["{}", '"text"', '{"jsonrpc":"2.0","method":42}']) {
      const response = await post(app, body, auth);
      expect(response.status, body).toBeGreaterThanOrEqual(400);
      expect(response.status, body).toBeLessThan(500);
    }
  });

  it("refuses every JSON-RPC batch with 400 Invalid Request and runs none of its calls", async () => {
    const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    const create = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "create_research_plan",
        arguments: {
          name: `Batched ${id}`,
          researchQuestion: "q",
          steps: [{ stepType: "search", instructions: "s" }],
        },
      },
    });
    const batches = [
      [],
      [ping(1), ping(2)],
      [INIT, ping(2)],
      Array.from({ length: 2000 }, (_, i) => create(i + 1)),
    ];
    for (const batch of batches) {
      const response = await post(app, JSON.stringify(batch), auth);
      expect(response.status, `batch of ${batch.length}`).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: expect.stringMatching(
            /^Invalid Request: batches are not supported by this protocol revision; send one message per request/,
          ),
        },
      });
    }
    // Had any element run, the tenant would now have a plan.
    const listed = await post(
      app,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "list_active_plans", arguments: {} },
      }),
      { ...auth, "MCP-Protocol-Version": "2025-06-18" },
    );
    expect(listed.status).toBe(200);
    expect((await listed.json()).result.structuredContent.plans).toEqual([]);
  });

  it("keeps the legacy SSE endpoint off and GET on the MCP endpoint refused", async () => {
    const sse = await fetch(`${app.url}/api/sse`, { headers: auth });
    expect(sse.status).toBe(404);
    await sse.body?.cancel();
    const get = await fetch(`${app.url}/api/mcp`, {
      headers: { ...auth, Accept: "text/event-stream" },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });

  // Last of the raw-HTTP checks: an upload cut short leaves the client's pooled
  // connection unusable, which would fail the next request of this test file.
  it("refuses a body over the 1 MB limit with 413, declared or streamed", async () => {
    const big = JSON.stringify({ ...INIT, padding: "x".repeat(1_100_000) });
    expect((await post(app, big, auth)).status).toBe(413);
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ > 40) controller.close();
        else controller.enqueue(chunk);
      },
    });
    expect((await post(app, stream, auth)).status).toBe(413);
  });

  // The server scenarios each revision's requirement set holds, with the ones
  // that do not apply to Cairn named with the reason in tests/conformance/
  // (the suite fails the run on any other failure, and on a listed one that
  // passes). `npx` fetches the suite: without it the run fails, never skips.
  it.each(["2025-11-25", "2026-07-28"])(
    "passes the official MCP conformance suite's server requirements for %s",
    (revision) => {
      // The auth hook goes to the suite's own Node 22 process only: through
      // NODE_OPTIONS it would also load into every process npx starts while it
      // installs node@22 on an empty cache, and break that install.
      const run = spawnSync(
        "npx",
        [
          "-y",
          "-p",
          "node@22",
          "-p",
          "@modelcontextprotocol/conformance@0.2.0-alpha.12",
          "--",
          "sh",
          "-c",
          'exec node --import "$CAIRN_CONFORMANCE_HOOK" "$(command -v conformance)" "$@"',
          "conformance",
          "server",
          "--url",
          `http://127.0.0.1:${app.port}/api/mcp`,
          "--requirements",
          revision,
          "--expected-failures",
          `${process.cwd()}/tests/conformance/server-${revision}.yaml`,
        ],
        {
          encoding: "utf8",
          timeout: 300_000,
          env: {
            ...process.env,
            CAIRN_CONFORMANCE_HOOK: `${process.cwd()}/tests/support/conformance-auth.mjs`,
            CAIRN_CONFORMANCE_KEY: app.tenantA.key,
            CAIRN_CONFORMANCE_PORT: String(app.port),
          },
        },
      );
      const output = [
        `requirements ${revision}: exit ${run.status}, signal ${run.signal}`,
        run.error ? `spawn error: ${run.error.message}` : "",
        `stdout:\n${run.stdout}`,
        `stderr:\n${run.stderr}`,
      ].join("\n");
      expect(run.status, output).toBe(0);
      expect(output, output).toContain("Baseline check passed: all failures are expected.");
      expect(output, output).toMatch(/✓ tools-list: \d+ passed, 0 failed/);
    },
    600_000,
  );
});

/** An object nested `depth` levels deep: { a: { a: ... } }. */
function nest(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
}

describe.each(BACKENDS)("bad input for every tool on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;
  let planId: string;
  let stepId: string;
  const missingId = "6f1c0d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f";

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    const created = await agent.ok("create_research_plan", {
      name: "Target",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "s" }],
    });
    planId = created.planId;
    stepId = created.steps[0].stepId;
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["create_research_plan", {}, /^VALIDATION_ERROR: .*name/],
    [
      "create_research_plan",
      { name: "n", researchQuestion: "q", steps: [] },
      /^VALIDATION_ERROR: .*at least one step/,
    ],
    [
      "create_research_plan",
      { name: "n", researchQuestion: "q", steps: [{ stepType: "dance", instructions: "x" }] },
      /^VALIDATION_ERROR: steps\.0\.stepType/,
    ],
    [
      "create_research_plan",
      {
        name: "n",
        researchQuestion: "q",
        steps: Array.from({ length: 201 }, () => ({ stepType: "search", instructions: "x" })),
      },
      /^VALIDATION_ERROR: .*at most 200 steps/,
    ],
    [
      "create_research_plan",
      {
        name: "n",
        researchQuestion: "q",
        steps: [{ stepType: "search", instructions: "x" }],
        branchingConditions: [
          { afterStepOrder: 1, conditionExpression: "a > 1", ifTrueAction: "explode" },
        ],
      },
      /^VALIDATION_ERROR: branchingConditions\.0\.ifTrueAction/,
    ],
    ["get_next_step", {}, /^VALIDATION_ERROR: planId/],
    ["get_next_step", { planId: "42" }, /^VALIDATION_ERROR: planId: must be a plan id/],
    ["get_next_step", { planId: "6f1c0d2e-3b4a-4c5d-8e9f-0a1b2c3d4e5f" }, /^NOT_FOUND: No plan/],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP" },
      /^VALIDATION_ERROR: .*result.*stepExecutionReport/,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP", result: "text", stepExecutionReport: report },
      /^VALIDATION_ERROR: result/,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP", result: {}, confidence: 7, stepExecutionReport: report },
      /^VALIDATION_ERROR: confidence/,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP", result: {}, stepExecutionReport: { thinking: "t" } },
      /^VALIDATION_ERROR: stepExecutionReport\.webSearches/,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "MISSING", result: {}, stepExecutionReport: report },
      /^NOT_FOUND: Plan .* has no step/,
    ],
    ["get_step_context", { planId: "PLAN" }, /^VALIDATION_ERROR: stepId/],
    ["request_user_review", { planId: "PLAN", stepId: "STEP" }, /^VALIDATION_ERROR: summary/],
    [
      "request_user_review",
      { planId: "PLAN", stepId: "STEP", summary: "s" },
      /^INVALID_TRANSITION: Plan .* is planning/,
    ],
    ["submit_user_decision", { planId: "PLAN", decision: "maybe" }, /^VALIDATION_ERROR: decision/],
    [
      "submit_user_decision",
      { planId: "PLAN", decision: "approve" },
      /^VALIDATION_ERROR: reviewRequestId is required: .* The plan has no pending review\./,
    ],
    [
      "submit_user_decision",
      {
        planId: "PLAN",
        reviewRequestId: "00000000-0000-4000-8000-000000000000",
        decision: "approve",
      },
      /^CONFLICT: The plan is no longer waiting/,
    ],
    [
      "modify_plan",
      { planId: "PLAN", action: "add_steps" },
      /^VALIDATION_ERROR: modificationRationale/,
    ],
    [
      "modify_plan",
      { planId: "PLAN", action: "explode", modificationRationale: "r" },
      /^VALIDATION_ERROR: action/,
    ],
    [
      "modify_plan",
      { planId: "PLAN", action: "add_steps", modificationRationale: "r" },
      /^VALIDATION_ERROR: add_steps needs steps/,
    ],
    [
      "modify_plan",
      {
        planId: "PLAN",
        action: "add_steps",
        insertAfterOrder: 5,
        steps: [{ stepType: "search", instructions: "x" }],
        modificationRationale: "r",
      },
      /^INVALID_STEP_REFERENCE: insertAfterOrder is 5/,
    ],
    [
      "modify_plan",
      { planId: "PLAN", action: "remove_step", stepId: "MISSING", modificationRationale: "r" },
      /^INVALID_STEP_REFERENCE: /,
    ],
    ["get_plan_status", { planId: ["x"] }, /^VALIDATION_ERROR: planId/],
    ["list_active_plans", { limit: 1000 }, /^VALIDATION_ERROR: limit/],
    ["get_research_context", { planId: "PLAN", sessionId: "" }, /^VALIDATION_ERROR: sessionId/],
    ["log_skill_execution", {}, /^VALIDATION_ERROR: skillName: .*; status: /],
    [
      "log_skill_execution",
      { skillName: "research", status: "done" },
      /^VALIDATION_ERROR: status: /,
    ],
    [
      "log_skill_execution",
      { skillName: "research", status: "completed" },
      /^VALIDATION_ERROR: status: a new tracking record starts as "started"/,
    ],
    [
      "log_skill_execution",
      { skillName: "research", status: "started", metadata: {} },
      /^VALIDATION_ERROR: metadata\.topic, metadata\.researchType, .*: required when creating/,
    ],
    [
      "log_skill_execution",
      {
        skillName: "research",
        status: "started",
        metadata: {
          researchType: "gossip",
          clarifyingQuestions: [1, 2, 3].map((n) => ({ question: `q${n}`, answer: "a" })),
        },
      },
      /^VALIDATION_ERROR: metadata\.researchType: .*; metadata\.clarifyingQuestions: never more than two/,
    ],
    [
      "log_skill_execution",
      { executionId: "MISSING", skillName: "research", status: "executing" },
      /^NOT_FOUND: No skill execution/,
    ],
    [
      "log_skill_execution",
      { executionId: "42", skillName: "research", status: "executing" },
      /^VALIDATION_ERROR: executionId: must be an execution id/,
    ],
    ["store_research", {}, /^VALIDATION_ERROR: artifactType: .*title: .*contentText: .*confidence/],
    [
      "store_research",
      {
        artifactType: "Big Finding!",
        title: "t",
        content: {},
        contentText: "x",
        confidence: 2,
        sourceUrls: ["ftp://example.org/x"],
      },
      /^VALIDATION_ERROR: artifactType: must be a short snake_case name.*; confidence: .*; sourceUrls\.0: /,
    ],
    [
      "store_research",
      { artifactType: "finding", title: "t", content: "text", contentText: "x", confidence: 0.5 },
      /^VALIDATION_ERROR: content: /,
    ],
    [
      "store_research",
      {
        artifactType: "finding",
        title: "t",
        content: {},
        contentText: "x",
        confidence: 0.5,
        stepId: "STEP",
      },
      /^VALIDATION_ERROR: planId: required with stepId/,
    ],
    [
      "store_research",
      {
        artifactType: "finding",
        title: "t",
        content: {},
        contentText: "x",
        confidence: 0.5,
        planId: "PLAN",
        stepId: "MISSING",
      },
      /^NOT_FOUND: Plan .* has no step/,
    ],
    ["search_sources", {}, /^VALIDATION_ERROR: query/],
    ["search_sources", { query: "   " }, /^VALIDATION_ERROR: query: must not be empty/],
    ["search_sources", { query: "x", limit: 500 }, /^VALIDATION_ERROR: limit/],
    ["search_sources", { query: "x", since: "yesterday" }, /^VALIDATION_ERROR: since/],
    ["search_sources", { query: "x", planId: "nope" }, /^VALIDATION_ERROR: planId/],
    // Found by tests/fuzz.test.ts: each of these was an INTERNAL_ERROR (the
    // database refused the value) until it was checked first.
    ["search_sources", { query: "x", since: "0000-01-01" }, /^VALIDATION_ERROR: since: /],
    [
      "search_sources",
      { query: "x", completesStep: { planId: "nope", stepId: "STEP" } },
      /^VALIDATION_ERROR: completesStep\.planId: must be a plan id/,
    ],
    [
      "extract_data",
      { schema: { type: "object" }, text: "t", completesStep: { planId: "PLAN" } },
      /^VALIDATION_ERROR: completesStep\.stepId: /,
    ],
    [
      "store_research",
      {
        artifactType: "finding",
        title: "t",
        content: {},
        contentText: "x",
        confidence: 0.5,
        completesStep: "PLAN",
      },
      /^VALIDATION_ERROR: completesStep: /,
    ],
    [
      "store_research",
      {
        artifactType: "finding",
        title: "t",
        content: {},
        contentText: "a\u0000b",
        confidence: 0.5,
      },
      /^VALIDATION_ERROR: contentText: contains a NUL character/,
    ],
    [
      "submit_step_result",
      {
        planId: "PLAN",
        stepId: "STEP",
        result: { notes: ["fine", "half an emoji \ud83e"] },
        stepExecutionReport: report,
      },
      /^VALIDATION_ERROR: result\.notes\.1: .*unpaired UTF-16 surrogate/,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP", result: { "\udc00": 1 }, stepExecutionReport: report },
      /^VALIDATION_ERROR: result\.\? \(a key\): /,
    ],
    [
      "submit_step_result",
      { planId: "PLAN", stepId: "STEP", result: nest(150), stepExecutionReport: report },
      /^VALIDATION_ERROR: result\.a\.a\.a.*: nested more than 100 levels deep/,
    ],
    ["extract_data", {}, /^VALIDATION_ERROR: schema/],
    [
      "extract_data",
      { schema: { type: "object" } },
      /^VALIDATION_ERROR: text or artifactIds: give the source text/,
    ],
    [
      "extract_data",
      { schema: { type: "array" }, text: "t" },
      /^VALIDATION_ERROR: schema: the top level must be/,
    ],
    [
      "extract_data",
      { schema: { type: "object", properties: { a: { type: "nonsense" } } }, text: "t" },
      /^VALIDATION_ERROR: schema: not a usable JSON Schema/,
    ],
    [
      "extract_data",
      { schema: { type: "object" }, text: "x".repeat(100_001) },
      /^VALIDATION_ERROR: text/,
    ],
    [
      "extract_data",
      { schema: { type: "object" }, text: "The price is 12 euros." },
      /^LLM_NOT_CONFIGURED: .*CAIRN_LLM_BASE_URL and CAIRN_LLM_MODEL are not set/,
    ],
    [
      "store_research_output",
      { planId: "PLAN" },
      /^VALIDATION_ERROR: outputMediaType: .*; content: /,
    ],
    [
      "store_research_output",
      { planId: "MISSING", outputMediaType: "chat_answer", content: "c" },
      /^NOT_FOUND: No plan/,
    ],
    [
      "store_research_output",
      { planId: "PLAN", executionId: "MISSING", outputMediaType: "chat_answer", content: "c" },
      /^NOT_FOUND: No skill execution/,
    ],
    [
      "submit_research_feedback",
      { planId: "PLAN", feedbackType: "initial", satisfaction: 6, summary: "s" },
      /^VALIDATION_ERROR: satisfaction: .*; followUpRequested: /,
    ],
    [
      "submit_research_feedback",
      {
        planId: "PLAN",
        feedbackType: "midway",
        satisfaction: 3.5,
        summary: "s",
        followUpRequested: false,
      },
      /^VALIDATION_ERROR: feedbackType: .*; satisfaction: must be a whole number/,
    ],
  ];

  it("answers every case with an error result whose text starts with its code", async () => {
    for (const [tool, args, expected] of cases) {
      const resolved = JSON.parse(
        JSON.stringify(args)
          .replaceAll('"PLAN"', `"${planId}"`)
          .replaceAll('"STEP"', `"${stepId}"`)
          .replaceAll('"MISSING"', `"${missingId}"`),
      );
      const answer = await agent.call(tool, resolved);
      expect(answer.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(answer.text, `${tool} ${JSON.stringify(args)}`).toMatch(expected);
    }
  });

  it("answers tools/call params the protocol refuses with invalid params, never an internal error", async () => {
    const params = [
      { name: "get_next_step", arguments: null },
      { name: "get_next_step", arguments: [planId] },
      { name: "get_next_step", arguments: "planId" },
      { name: "get_next_step", arguments: 42 },
      { name: 42, arguments: {} },
      {},
    ];
    for (const [index, param] of params.entries()) {
      const response = await post(
        app,
        JSON.stringify({ jsonrpc: "2.0", id: index + 1, method: "tools/call", params: param }),
        { Authorization: `Bearer ${app.tenantA.key}`, "MCP-Protocol-Version": "2025-06-18" },
      );
      expect(response.status, JSON.stringify(param)).toBe(200);
      expect(await response.json(), JSON.stringify(param)).toMatchObject({
        id: index + 1,
        error: { code: -32602, message: expect.stringMatching(/Invalid tools\/call request/) },
      });
    }
  });

  it("answers arguments nested too deep for JSON.stringify with VALIDATION_ERROR", async () => {
    // 50,000 levels: the SDK client cannot even serialise them, so the body is written by hand.
    const depth = 50_000;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_step_result","arguments":{"planId":"${planId}","stepId":"${stepId}","stepExecutionReport":${JSON.stringify(report)},"result":{"deep":${"[".repeat(depth)}${"]".repeat(depth)}}}}}`;
    const response = await post(app, body, {
      Authorization: `Bearer ${app.tenantA.key}`,
      "MCP-Protocol-Version": "2025-06-18",
    });
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.result?.isError).toBe(true);
    expect(answer.result.content[0].text).toMatch(
      /^VALIDATION_ERROR: result\.deep\.0\.0.*: nested more than 100 levels deep/,
    );
  });

  it("left the plan untouched by all of it", async () => {
    const context = await agent.ok("get_research_context", { planId });
    expect(context.plan.status).toBe("planning");
    expect(context.steps).toHaveLength(1);
    expect(context.steps[0].status).toBe("pending");
    expect((await agent.ok("list_active_plans")).plans).toHaveLength(1);
  });

  it("answers an unknown tool with a protocol error naming it", async () => {
    await expect(agent.client.callTool({ name: "drop_tables", arguments: {} })).rejects.toThrow(
      /Unknown tool "drop_tables"/,
    );
  });
});
