import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stripCodeFence } from "./code-fence";

/** The expressions stripCodeFence replaces; safe here, on short inputs only. */
function byRegex(answer: string): string {
  return answer
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
}

describe("stripCodeFence", () => {
  it("removes a fence with or without a json tag, in any case", () => {
    expect(stripCodeFence('```json\n{"a": 1}\n```')).toBe('{"a": 1}');
    expect(stripCodeFence('  ```JSON {"a": 1}```  \n')).toBe('{"a": 1}');
    expect(stripCodeFence('```\n{"a": 1}\n```')).toBe('{"a": 1}');
    expect(stripCodeFence('{"a": 1}')).toBe('{"a": 1}');
    expect(stripCodeFence('\t{"a": "```"}\n')).toBe('{"a": "```"}');
    expect(stripCodeFence("```")).toBe("");
  });

  it("strips exactly what the regular expressions it replaces did", () => {
    const piece = fc.constantFrom("`", "```", "json", "JsOn", "js", " ", "\n", "\t", "{", "}", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const answer = pieces.join("");
        expect(stripCodeFence(answer)).toBe(byRegex(answer));
      }),
      { numRuns: 2000 },
    );
  });

  it("handles a long run of whitespace with no fence after it (quadratic for the old expression)", () => {
    const spaces = " ".repeat(200_000);
    expect(stripCodeFence(`{"a":${spaces}1}`)).toBe(`{"a":${spaces}1}`);
    expect(stripCodeFence(`\`\`\`json${spaces}{"a": 1}${spaces}x`)).toBe(`{"a": 1}${spaces}x`);
    expect(stripCodeFence(`\`\`\`json${spaces}{"a": 1}${spaces}\`\`\``)).toBe('{"a": 1}');
  });
});
