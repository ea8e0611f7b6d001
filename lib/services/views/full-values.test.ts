/**
 * A proposal field cut in the database is shown as its whole would be:
 * indentedStart gives the start of JSON.stringify's indented text from the
 * start of its compact text, for any JSON value and any length.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indentedStart } from "./full-values";

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
