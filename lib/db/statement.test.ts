import { describe, expect, it } from "vitest";
import { arrayParam } from "./statement";

describe("arrayParam", () => {
  it("quotes each value, escaping quotes and backslashes, in one array literal", () => {
    expect(arrayParam([])).toBe("{}");
    expect(arrayParam(["a", 'say "hi"', "back\\slash", "x,y"])).toBe(
      '{"a","say \\"hi\\"","back\\\\slash","x,y"}',
    );
  });

  it("writes a null as the array's NULL, and the text NULL quoted", () => {
    expect(arrayParam(["NULL", null])).toBe('{"NULL",NULL}');
  });
});
