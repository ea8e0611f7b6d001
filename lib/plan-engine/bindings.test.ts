import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BindingSource,
  classifyUnresolved,
  findBindings,
  MAX_BINDING_PATH_SEGMENTS,
  renumberBindings,
  resolveBindings,
  validateBindings,
} from "./bindings";
import type { StepStatus } from "./states";

const source = (
  steps: [number, StepStatus, unknown][],
  researchQuestion = "Do heat pumps work?",
): BindingSource => ({
  researchQuestion,
  steps: new Map(
    steps.map(([order, status, result]) => [
      order,
      { stepId: `s${order}`, status, result, tool: null },
    ]),
  ),
});

describe("resolveBindings", () => {
  const done = source([
    [1, "completed", { hits: [{ title: "A", score: 2 }], n: 3, ok: true }],
    [2, "failed", null],
    [3, "skipped", null],
    [4, "in_progress", null],
  ]);

  it("keeps the type of a whole binding and interpolates inside text", () => {
    const { value, unresolved } = resolveBindings(
      {
        hits: "{{steps.1.result.hits}}",
        n: "{{ steps.1.result.n }}",
        q: "{{plan.researchQuestion}}",
        text: "Top: {{steps.1.result.hits.0.title}} ({{steps.1.result.n}} hits, {{steps.1.result.hits.0}})",
        nested: [{ deep: "{{steps.1.result.ok}}" }],
      },
      done,
    );
    expect(unresolved).toEqual([]);
    expect(value).toEqual({
      hits: [{ title: "A", score: 2 }],
      n: 3,
      q: "Do heat pumps work?",
      text: 'Top: A (3 hits, {"title":"A","score":2})',
      nested: [{ deep: true }],
    });
  });

  it("says why each binding cannot be resolved", () => {
    const { unresolved } = resolveBindings(
      [
        "{{steps.1.result.missing}}",
        "{{steps.2.result.x}}",
        "{{steps.3.result.x}}",
        "{{steps.4.result.x}}",
        "{{steps.9.result.x}}",
      ],
      done,
    );
    expect(unresolved.map((u) => u.reason)).toEqual([
      "missing_path",
      "failed",
      "skipped",
      "not_completed",
      "no_such_step",
    ]);
  });

  it("never follows prototype members", () => {
    const { unresolved } = resolveBindings("{{steps.1.result.hits.toString}}", done);
    expect(unresolved).toHaveLength(1);
    expect(findBindings("{{steps.1.result.constructor}}").errors[0]).toMatch(/may not follow/);
  });

  it("never throws, and accounts for every binding (property)", () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    const path = fc.array(fc.constantFrom("a", "b", "0", "1", "hits"), { maxLength: 4 });
    const binding = fc
      .tuple(fc.integer({ min: 0, max: 5 }), path)
      .map(([n, p]) => `{{steps.${n}.result${p.map((s) => `.${s}`).join("")}}}`);
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 4 }),
            fc.constantFrom<StepStatus>("completed", "failed", "skipped", "pending"),
            json,
          ),
        ),
        fc.dictionary(fc.string({ maxLength: 5 }), fc.oneof(binding, fc.string(), json)),
        (steps, value) => {
          const { bindings } = findBindings(value);
          const resolved = resolveBindings(value, source(steps));
          expect(resolved.unresolved.length).toBeLessThanOrEqual(bindings.length);
          if (resolved.unresolved.length > 0) {
            const pause = classifyUnresolved(
              { stepId: "s9", stepOrder: 9, tool: "search_sources" },
              "p",
              {},
              resolved.unresolved,
            );
            expect(["unresolvable_params", "unresolved_dependency"]).toContain(pause.type);
            expect(pause.suggestedTool.arguments.completesStep).toEqual({
              planId: "p",
              stepId: "s9",
            });
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("validateBindings", () => {
  it("accepts bindings to earlier steps and the research question", () => {
    expect(() =>
      validateBindings(3, "arguments", {
        a: "{{steps.2.result.x}}",
        b: "{{plan.researchQuestion}}",
      }),
    ).not.toThrow();
  });

  it("refuses a binding to the same or a later step", () => {
    expect(() => validateBindings(2, "inputs", { a: "{{steps.2.result.x}}" })).toThrow(
      expect.objectContaining({ code: "INVALID_STEP_REFERENCE" }),
    );
  });

  it("refuses malformed bindings and paths that are too deep", () => {
    expect(() => validateBindings(2, "inputs", "{{step.1.result}}")).toThrow(/is not a binding/);
    const deep = Array.from({ length: MAX_BINDING_PATH_SEGMENTS + 1 }, () => "a").join(".");
    expect(() => validateBindings(2, "inputs", `{{steps.1.result.${deep}}}`)).toThrow(/at most/);
  });
});

describe("classifyUnresolved", () => {
  it("names a failed or skipped producer as an unresolved dependency", () => {
    const { unresolved } = resolveBindings("{{steps.2.result.x}}", source([[2, "skipped", null]]));
    const pause = classifyUnresolved(
      { stepId: "s3", stepOrder: 3, tool: "search_sources" },
      "p",
      { limit: 3 },
      unresolved,
    );
    expect(pause).toMatchObject({
      type: "unresolved_dependency",
      producingStepOrder: 2,
      suggestedTool: { name: "search_sources", arguments: { limit: 3 } },
    });
  });
});

describe("renumberBindings", () => {
  it("follows moved steps and reports a binding whose step was removed", () => {
    const moved = renumberBindings({ a: "{{steps.2.result.x}} and {{steps.1.result}}" }, (old) =>
      old === 2 ? 5 : old,
    );
    expect(moved).toEqual({
      value: { a: "{{steps.5.result.x}} and {{steps.1.result}}" },
      lost: null,
      changed: true,
    });
    expect(renumberBindings("{{steps.2.result.x}}", () => undefined).lost).toBe(
      "{{steps.2.result.x}}",
    );
  });

  it("says whether any binding moved, so a value none of whose steps moved is not rewritten", () => {
    const value = { a: ["{{steps.1.result.x}}", { b: "see {{steps.3.result}}" }] };
    expect(renumberBindings(value, (old) => old).changed).toBe(false);
    expect(renumberBindings(value, (old) => (old === 3 ? 4 : old)).changed).toBe(true);
  });
});

describe("findBindings on text that is nearly a binding", () => {
  it("reads a run of spaces after an unclosed {{ in one pass, and trims a binding's spaces", () => {
    // The pattern before split the run every way: 1,000 spaces took 0.5 s,
    // the 64 KB an input may hold would not have ended.
    expect(findBindings({ q: `{{${" ".repeat(60_000)}` })).toEqual({ bindings: [], errors: [] });
    expect(findBindings({ q: `{{${" ".repeat(60_000)}}}` }).errors).toHaveLength(1);
    expect(findBindings({ q: "see {{  steps.2.result.x  }}" }).bindings).toEqual([
      { kind: "step", stepOrder: 2, path: ["x"], text: "{{  steps.2.result.x  }}" },
    ]);
  });

  it("finds a binding at any depth, as resolving and renumbering walk", () => {
    let deep: unknown = "{{steps.7.result}}";
    for (let level = 0; level < 60; level += 1) deep = level % 2 ? [deep] : { a: deep };
    expect(findBindings(deep).bindings).toHaveLength(1);
    expect(() => validateBindings(3, "inputs", deep)).toThrow(/names step 7, which is not earlier/);
  });
});
