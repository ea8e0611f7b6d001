import Ajv from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { publishedInputSchema, publishedOutputSchema } from "./published-schema";

describe("an input schema as published", () => {
  const input = z.object({
    planId: z.uuid().describe("The plan's id."),
    code: z.string().regex(/^[a-z]+$/),
    email: z.email(),
  });

  it("names a string format without zod's regular expression for it", () => {
    const { properties } = publishedInputSchema(input) as { properties: Record<string, object> };
    expect(properties.planId).toEqual({
      type: "string",
      format: "uuid",
      description: "The plan's id.",
    });
    expect(properties.email).toEqual({ type: "string", format: "email" });
  });

  it("keeps a pattern of the schema's own", () => {
    const { properties } = publishedInputSchema(input) as { properties: Record<string, object> };
    expect(properties.code).toEqual({ type: "string", pattern: "^[a-z]+$" });
  });

  it("refuses an unknown field, as every tool does", () => {
    expect(publishedInputSchema(input).additionalProperties).toBe(false);
  });
});

describe("an output schema as published", () => {
  const step = z.object({ stepId: z.string(), inputs: z.record(z.string(), z.unknown()) });
  const output = z.object({
    status: z.enum(["ready", "paused"]).describe("What to do."),
    step: step.describe("The step handed out."),
    steps: z.array(step),
    review: step.nullable(),
    tags: z.array(z.string()),
    answer: z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("a"), a: z.number() }),
      z.object({ kind: z.literal("b"), b: z.string() }),
    ]),
    count: z.number().int().min(0),
    hint: z.string().optional(),
  });
  const published = publishedOutputSchema(output);

  it("is the answer's own fields with their types, and no prose", () => {
    expect(published).toEqual({
      type: "object",
      properties: {
        status: { type: "string" },
        step: { type: "object" },
        steps: { type: "array" },
        review: { anyOf: [{ type: "object" }, { type: "null" }] },
        tags: { type: "array", items: { type: "string" } },
        answer: { type: "object" },
        count: { type: "integer" },
        hint: { type: "string" },
      },
    });
  });

  it("accepts every answer the whole schema accepts", () => {
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const answer = output.parse({
      status: "ready",
      step: { stepId: "s1", inputs: { a: 1 } },
      steps: [{ stepId: "s2", inputs: {} }],
      review: null,
      tags: ["x"],
      answer: { kind: "b", b: "text" },
      count: 3,
      hint: "Go on.",
    });
    const validate = ajv.compile(published as object);
    expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
  });

  it("must be an object with properties, as MCP's outputSchema is", () => {
    expect(() => publishedOutputSchema(z.array(z.string()))).toThrow(/must be an object/);
  });
});
