/**
 * extract_data's defences against what a caller or a model can send: regular
 * expressions in the schema, and answers that are huge or shaped to make the
 * parsing slow. A local HTTP server plays the model; no database is needed, since
 * the source is given as text. (tests/extract-data.test.ts covers the rest
 * through the production build.)
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ANSWER_BYTES } from "../../llm/chat-completions";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { extractData } from "./extract-data";

const EVIL = "^(a+)+$";

/** The next chat-completions message content the fake model answers with. */
let nextContent = "{}";
/** Send it in pieces without a Content-Length, as a streaming server would. */
let chunked = false;
let requests = 0;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    requests++;
    request.resume();
    request.on("end", () => {
      const body = JSON.stringify({ choices: [{ message: { content: nextContent } }] });
      response.writeHead(200, { "Content-Type": "application/json" });
      if (!chunked) return response.end(body);
      for (let at = 0; at < body.length; at += 65_536) response.write(body.slice(at, at + 65_536));
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function context(): ServiceContext {
  return {
    // Never touched: the source is given as text.
    db: undefined as never,
    tenantId: "00000000-0000-4000-8000-000000000000",
    actor: { type: "api_key", id: null, label: "test" },
    stallThresholdSeconds: 1800,
    llm: { baseUrl, model: "fake" },
  };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("extract_data's schema check", () => {
  it("refuses a pattern with VALIDATION_ERROR naming where it is, before asking the model", async () => {
    const before = requests;
    const error = await failure(
      extractData(context(), {
        schema: { type: "object", properties: { name: { type: "string", pattern: EVIL } } },
        text: "aaaa",
      }),
    );
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toContain("regular-expression patterns are not supported");
    expect(error.message).toContain("#/properties/name/pattern");
    expect(requests).toBe(before);
  });

  it("refuses a nested one and patternProperties too", async () => {
    const nested = await failure(
      extractData(context(), {
        schema: {
          type: "object",
          properties: { items: { type: "array", items: { $ref: "#/$defs/item" } } },
          $defs: {
            item: { type: "object", properties: { sku: { oneOf: [{ pattern: EVIL }] } } },
          },
        },
        text: "aaaa",
      }),
    );
    expect(nested.code).toBe("VALIDATION_ERROR");
    expect(nested.message).toContain("#/$defs/item/properties/sku/oneOf/0/pattern");

    const patternProperties = await failure(
      extractData(context(), {
        schema: { type: "object", patternProperties: { [EVIL]: { type: "string" } } },
        text: "aaaa",
      }),
    );
    expect(patternProperties.code).toBe("VALIDATION_ERROR");
    expect(patternProperties.message).toContain('"patternProperties" at #/patternProperties');
  });
});

describe("extract_data's reading of the model's answer", () => {
  const schema = {
    type: "object",
    properties: { price: { type: "number" } },
    required: ["price"],
  };

  it("parses an answer with 200,000 spaces inside, and one fenced with them around", async () => {
    const spaces = " ".repeat(200_000);
    nextContent = `{"price":${spaces}11900}${spaces}`;
    await expect(extractData(context(), { schema, text: "11,900 euros" })).resolves.toEqual({
      data: { price: 11900 },
      model: "fake",
      attempts: 1,
    });

    nextContent = `\`\`\`json${spaces}{"price": 11900}${spaces}\`\`\``;
    await expect(extractData(context(), { schema, text: "11,900 euros" })).resolves.toMatchObject({
      data: { price: 11900 },
    });
  });

  it.each([
    ["with a Content-Length", false],
    ["streamed", true],
  ])("refuses an answer over 1 MB (%s) with LLM_UPSTREAM_ERROR saying so", async (_, stream) => {
    nextContent = `{"price": 1, "padding": "${"x".repeat(MAX_ANSWER_BYTES)}"}`;
    chunked = stream;
    try {
      const error = await failure(extractData(context(), { schema, text: "11,900 euros" }));
      expect(error.code).toBe("LLM_UPSTREAM_ERROR");
      expect(error.message).toContain("larger than 1 MB");
      expect(error.metadata).toMatchObject({ reason: "too_large" });
    } finally {
      chunked = false;
    }
  });

  it("reads a streamed answer under the limit whole", async () => {
    nextContent = `{"price": 11900, "note": "${"y".repeat(300_000)}"}`;
    chunked = true;
    try {
      const result = await extractData(context(), { schema, text: "11,900 euros" });
      expect(result.data.price).toBe(11900);
      expect(result.data.note).toHaveLength(300_000);
    } finally {
      chunked = false;
    }
  });
});
