/**
 * extract_data through the production build against a small local HTTP server
 * that speaks the OpenAI chat-completions protocol, scripted per test: a valid
 * answer, an invalid one corrected on the retry, two invalid ones, upstream
 * failures; plus extraction from stored artifacts with tenant isolation, and a
 * server without CAIRN_LLM_* configuration.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { type Agent, connectAgent } from "./support/mcp-client";

type ChatRequest = {
  path: string;
  authorization: string | undefined;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format: { type: string };
  };
};
type Reply = (response: ServerResponse) => void;

const API_KEY = "sk-test-extraction";
const MODEL = "test-model-mini";

/** A chat-completions answer whose message content is `content`. */
const answer =
  (content: string): Reply =>
  (response) => {
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end(
      JSON.stringify({
        id: "chatcmpl-test",
        object: "chat.completion",
        model: MODEL,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      }),
    );
  };
const status =
  (code: number, message: string): Reply =>
  (response) => {
    response.writeHead(code, { "Content-Type": "application/json" });
    response.end(JSON.stringify({ error: { message, type: "test" } }));
  };
const hangUp: Reply = (response) => {
  response.socket?.destroy();
};

/** The fake model: answers each request with the next scripted reply and keeps the requests. */
function fakeModel() {
  const requests: ChatRequest[] = [];
  let replies: Reply[] = [];
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = "";
    request.on("data", (chunk: Buffer) => {
      raw += chunk.toString();
    });
    request.on("end", () => {
      requests.push({
        path: request.url ?? "",
        authorization: request.headers.authorization,
        body: JSON.parse(raw),
      });
      const reply = replies.shift() ?? status(500, "no scripted reply left");
      reply(response);
    });
  });
  return {
    requests,
    script(...next: Reply[]) {
      replies = next;
      requests.length = 0;
    },
    async start() {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const PRICE_SCHEMA = {
  type: "object",
  properties: {
    price: { type: "number", description: "The price in euros." },
    currency: { type: "string", enum: ["EUR", "USD"] },
    validFrom: { type: "string", format: "date" },
  },
  required: ["price", "currency"],
  additionalProperties: false,
};
const TEXT = "From 1 March 2026 the heat pump costs 11,900 euros installed.";

describe("extract_data with a configured language model", () => {
  const model = fakeModel();
  let app: AppServer;
  let agent: Agent;

  beforeAll(async () => {
    const baseUrl = await model.start();
    app = await startAppServer("pglite", {
      env: { CAIRN_LLM_BASE_URL: baseUrl, CAIRN_LLM_API_KEY: API_KEY, CAIRN_LLM_MODEL: MODEL },
    });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
    await model.stop();
  });
  beforeEach(() => model.script());

  it("returns the model's object when it matches the schema the first time", async () => {
    model.script(answer('{"price": 11900, "currency": "EUR", "validFrom": "2026-03-01"}'));
    const result = await agent.ok("extract_data", {
      schema: PRICE_SCHEMA,
      text: TEXT,
      instructions: "Prices in euros.",
    });
    expect(result).toEqual({
      data: { price: 11900, currency: "EUR", validFrom: "2026-03-01" },
      model: MODEL,
      attempts: 1,
    });
    expect(model.requests).toHaveLength(1);
    const [request] = model.requests;
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body.model).toBe(MODEL);
    expect(request?.body.response_format).toEqual({ type: "json_object" });
    expect(request?.body.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(request?.body.messages[0]?.content).toContain(JSON.stringify(PRICE_SCHEMA));
    expect(request?.body.messages[1]?.content).toContain("Prices in euros.");
    expect(request?.body.messages[1]?.content).toContain(TEXT);
  });

  it("accepts an answer wrapped in a Markdown fence", async () => {
    model.script(answer('```json\n{"price": 11900, "currency": "EUR"}\n```'));
    const result = await agent.ok("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(result).toMatchObject({ data: { price: 11900, currency: "EUR" }, attempts: 1 });
  });

  it("retries once with the validation errors and returns the corrected object", async () => {
    model.script(
      answer('{"price": "11,900", "validFrom": "March"}'),
      answer('{"price": 11900, "currency": "EUR", "validFrom": "2026-03-01"}'),
    );
    const result = await agent.ok("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(result).toMatchObject({ data: { price: 11900 }, attempts: 2 });
    expect(model.requests).toHaveLength(2);
    const retry = model.requests[1]?.body.messages ?? [];
    expect(retry.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(retry[2]?.content).toBe('{"price": "11,900", "validFrom": "March"}');
    const feedback = retry[3]?.content ?? "";
    expect(feedback).toContain("(root) must have required property 'currency'");
    expect(feedback).toContain("/price must be number");
    expect(feedback).toContain('/validFrom must match format "date"');
  });

  it("retries after an answer that is not JSON at all", async () => {
    model.script(
      answer("The price is 11,900 euros."),
      answer('{"price": 11900, "currency": "EUR"}'),
    );
    const result = await agent.ok("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(result.attempts).toBe(2);
    expect(model.requests[1]?.body.messages[3]?.content).toContain("not valid JSON");
  });

  it("fails with EXTRACTION_FAILED when the retry does not match either", async () => {
    model.script(answer('{"price": "cheap"}'), answer('["not", "an", "object"]'));
    const text = await agent.fails("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(text).toMatch(
      /^EXTRACTION_FAILED: The model's answer did not match your schema, also after a retry: the answer must be one JSON object\./,
    );
    expect(model.requests).toHaveLength(2);
  });

  it("reports upstream failures as LLM_UPSTREAM_ERROR, never as an internal error", async () => {
    const cases: [Reply, RegExp][] = [
      [
        status(503, "model overloaded"),
        /^LLM_UPSTREAM_ERROR: The language model answered HTTP 503: model overloaded\. Try again later/,
      ],
      [
        // Some providers echo the key they were given; Cairn must not pass it on.
        status(401, `Incorrect API key provided: ${API_KEY}`),
        /^LLM_UPSTREAM_ERROR: The language model answered HTTP 401: .*Ask the operator to check CAIRN_LLM_API_KEY/,
      ],
      [
        hangUp,
        /^LLM_UPSTREAM_ERROR: The language model at CAIRN_LLM_BASE_URL could not be reached/,
      ],
      [
        (response) => {
          response.writeHead(200, { "Content-Type": "application/json" });
          response.end('{"unexpected": true}');
        },
        /^LLM_UPSTREAM_ERROR: .*not a chat-completions response/,
      ],
    ];
    for (const [reply, expected] of cases) {
      model.script(reply);
      const text = await agent.fails("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
      expect(text).toMatch(expected);
      // The key went to the model, and never comes back in what the agent is told.
      expect(model.requests[0]?.authorization).toBe(`Bearer ${API_KEY}`);
      expect(text).not.toContain(API_KEY);
    }
  });

  it("extracts from stored artifacts of the caller's tenant only", async () => {
    const stored = await agent.ok("store_research", {
      artifactType: "data_extract",
      title: "Heat pump quote, Tampere",
      content: {},
      contentText: "Installer quote: 11,900 euros, valid from 2026-03-01.",
      confidence: 0.9,
    });
    model.script(answer('{"price": 11900, "currency": "EUR"}'));
    const result = await agent.ok("extract_data", {
      schema: PRICE_SCHEMA,
      artifactIds: [stored.artifactId],
    });
    expect(result.data).toEqual({ price: 11900, currency: "EUR" });
    const user = model.requests[0]?.body.messages[1]?.content ?? "";
    expect(user).toContain(`## Artifact ${stored.artifactId}: Heat pump quote, Tampere`);
    expect(user).toContain("Installer quote: 11,900 euros");

    const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    try {
      model.script(answer('{"price": 1, "currency": "EUR"}'));
      expect(
        await beta.fails("extract_data", {
          schema: PRICE_SCHEMA,
          artifactIds: [stored.artifactId],
        }),
      ).toMatch(new RegExp(`^NOT_FOUND: No artifact ${stored.artifactId} exists for this account`));
      // Nothing of Alpha's reached the model on Beta's behalf.
      expect(model.requests).toHaveLength(0);
    } finally {
      await beta.close();
    }
  });

  it("refuses a source text over the limit before calling the model", async () => {
    const big = await agent.ok("store_research", {
      artifactType: "source_summary",
      title: "Long report",
      content: {},
      contentText: "word ".repeat(19_000),
      confidence: 0.5,
    });
    expect(
      await agent.fails("extract_data", {
        schema: PRICE_SCHEMA,
        text: "x".repeat(10_000),
        artifactIds: [big.artifactId],
      }),
    ).toMatch(/^VALIDATION_ERROR: The source text is \d+ characters; the limit is 100000/);
    expect(model.requests).toHaveLength(0);
  });

  it("refuses regular-expression patterns in the schema before calling the model", async () => {
    const text = await agent.fails("extract_data", {
      schema: {
        ...PRICE_SCHEMA,
        properties: {
          ...PRICE_SCHEMA.properties,
          sku: { type: "array", items: { type: "string", pattern: "^(a+)+$" } },
        },
      },
      text: TEXT,
    });
    expect(text).toMatch(
      /^VALIDATION_ERROR: schema: regular-expression patterns are not supported \("pattern" at #\/properties\/sku\/items\/pattern\)/,
    );
    expect(model.requests).toHaveLength(0);
  });

  it("refuses a model answer over 1 MB as LLM_UPSTREAM_ERROR", async () => {
    model.script(answer(`{"price": 1, "currency": "EUR", "x": "${"x".repeat(1_100_000)}"}`));
    const text = await agent.fails("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(text).toMatch(/^LLM_UPSTREAM_ERROR: The language model's answer is larger than 1 MB/);
  });

  it("compiles 2020-12 schemas too", async () => {
    model.script(answer('{"items": [1, "two"]}'));
    const result = await agent.ok("extract_data", {
      schema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: {
          items: { type: "array", prefixItems: [{ type: "number" }, { type: "string" }] },
        },
      },
      text: "one, two",
    });
    expect(result.data).toEqual({ items: [1, "two"] });
  });
});

describe("extract_data without a language model", () => {
  let app: AppServer;
  let agent: Agent;

  beforeAll(async () => {
    app = await startAppServer("pglite", { env: { CAIRN_LLM_BASE_URL: "http://127.0.0.1:9/v1" } });
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("answers LLM_NOT_CONFIGURED naming what is missing and how to set it", async () => {
    const text = await agent.fails("extract_data", { schema: PRICE_SCHEMA, text: TEXT });
    expect(text).toMatch(/^LLM_NOT_CONFIGURED: extract_data needs a language model/);
    expect(text).toContain("CAIRN_LLM_MODEL is not set");
    expect(text).toContain("CAIRN_LLM_BASE_URL (an OpenAI-compatible API");
    expect(text).toContain("store_research");
  });
});
