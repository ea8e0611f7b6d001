import { describe, expect, it } from "vitest";
import { queryWords } from "./search-sources";

describe("queryWords", () => {
  it("splits wanted from excluded words as websearch_to_tsquery reads them", () => {
    expect(queryWords('"direct air capture" cost -DAC or -"carbon credits"')).toEqual({
      wanted: ["direct", "air", "capture", "cost"],
      excluded: ["DAC", "carbon", "credits"],
    });
  });

  it("keeps letters and digits of any script and drops punctuation", () => {
    expect(queryWords("Wärmepumpe, COP≥3.5; 2024!")).toEqual({
      wanted: ["Wärmepumpe", "COP", "3", "5", "2024"],
      excluded: [],
    });
  });

  it("splits hyphenated words inside a token but not a leading minus", () => {
    expect(queryWords("lithium-ion -cobalt")).toEqual({
      wanted: ["lithium", "ion"],
      excluded: ["cobalt"],
    });
  });

  it("caps the words it passes on", () => {
    const many = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    expect(queryWords(many).wanted).toHaveLength(32);
  });
});
