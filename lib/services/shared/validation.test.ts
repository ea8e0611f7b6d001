import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isAppError } from "../../plan-engine/app-error";
import { closestName, parseInput, unknownFields } from "./validation";

const schema = z.object({
  name: z.string(),
  branchingConditions: z
    .array(z.object({ afterStepOrder: z.number(), conditionExpression: z.string() }))
    .optional(),
  nested: z.object({ inner: z.string() }).nullable().optional(),
  open: z.looseObject({ topic: z.string().optional() }).optional(),
  record: z.record(z.string(), z.unknown()).optional(),
});

function refusal(raw: unknown): string {
  try {
    parseInput(schema, raw);
  } catch (error) {
    if (isAppError(error) && error.code === "VALIDATION_ERROR") return error.message;
    throw error;
  }
  throw new Error("the input was accepted");
}

describe("unknown fields", () => {
  it("refuses a misspelled top-level field and names the field meant", () => {
    expect(refusal({ name: "x", branchingCondition: [] })).toContain(
      "branchingCondition (did you mean branchingConditions?)",
    );
  });

  it("refuses unknown fields inside arrays and nested objects, by path", () => {
    const found = unknownFields(schema, {
      name: "x",
      branchingConditions: [{ afterStepOrder: 1, conditionExpresion: "a", extra: 1 }],
      nested: { inner: "y", iner: "z" },
    });
    expect(found).toEqual([
      { path: "branchingConditions[0].conditionExpresion", suggestion: "conditionExpression" },
      { path: "branchingConditions[0].extra", suggestion: undefined },
      { path: "nested.iner", suggestion: "inner" },
    ]);
  });

  it("leaves open objects and records alone", () => {
    expect(
      parseInput(schema, { name: "x", open: { anything: 1 }, record: { any: 2 } }),
    ).toMatchObject({ name: "x", open: { anything: 1 }, record: { any: 2 } });
  });

  it("suggests only a close name", () => {
    expect(closestName("nmae", ["name", "steps"])).toBe("name");
    expect(closestName("colour", ["planId", "steps"])).toBeUndefined();
  });
});

describe("a required field left out", () => {
  it("says it is required and what it is for, not the type error zod reports", () => {
    const report = z.object({
      stepExecutionReport: z
        .object({ thinking: z.string() })
        .describe("How the step was done. Every field is required."),
    });
    try {
      parseInput(report, {});
      throw new Error("the input was accepted");
    } catch (error) {
      if (!isAppError(error)) throw error;
      expect(error.message).toBe(
        "stepExecutionReport: required (object) but missing: How the step was done. Every field is required.",
      );
    }
    expect(refusal({})).toBe("name: required (string) but missing.");
  });
});
