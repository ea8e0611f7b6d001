/**
 * A proposal field cut in the database is shown as its whole would be:
 * indentedStart gives the start of JSON.stringify's indented text from the
 * start of its compact text, for any JSON value and any length; shortenJson
 * shows a parsed value's start the same way, writing no more than it shows.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indentedStart, PREVIEW_CHARS, shorten, shortenJson } from "./full-values";

describe("indentedStart", () => {
  it("is the start of the value indented whole, for any value and length", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(400), (value, chars) => {
        const compact = JSON.stringify(value);
        const indented = JSON.stringify(value, null, 2);
        expect(indentedStart(compact, chars).slice(0, chars)).toBe(indented.slice(0, chars));
      }),
      { numRuns: 2_000, seed: 45 },
    );
  });

  it("stops once it has written the characters asked for", () => {
    const compact = JSON.stringify({ rows: Array.from({ length: 100_000 }, (_, i) => i) });
    const start = indentedStart(compact, 2_001);
    expect(start.length).toBeGreaterThanOrEqual(2_001);
    expect(start.length).toBeLessThan(2_100);
  });
});

describe("shortenJson", () => {
  it("shows what shortening the whole indented text shows, with the size as stored", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 300 }), (value, chars) => {
        const whole = shorten(JSON.stringify(value, null, 2) ?? "null", chars);
        expect(shortenJson(value, chars)).toEqual({
          ...whole,
          bytes: Buffer.byteLength(JSON.stringify(value) ?? "null", "utf8"),
        });
      }),
      { seed: 40_43, numRuns: 500 },
    );
    const pair = { key: "a😀b".repeat(10) };
    for (let chars = 1; chars < 40; chars++) {
      expect(shortenJson(pair, chars).text).toBe(
        shorten(JSON.stringify(pair, null, 2), chars).text,
      );
    }
  });

  it("never writes the indented text of a deep value whole (security review, docs/security.md)", () => {
    // 400 levels deep, its innermost list of 700,000 zeros: 1.4 MB as JSON,
    // over 560 million characters indented, more than a string can hold.
    let deep: unknown = Array.from({ length: 700_000 }, () => 0);
    for (let level = 0; level < 400; level++) deep = [deep];
    const shown = shortenJson(deep);
    expect(shown.shortened).toBe(true);
    expect(shown.text).toHaveLength(PREVIEW_CHARS);
    expect(shown.text.startsWith("[\n  [\n    [\n")).toBe(true);
    // The size as stored, unindented.
    expect(shown.bytes).toBe(Buffer.byteLength(JSON.stringify(deep), "utf8"));
  });
});
