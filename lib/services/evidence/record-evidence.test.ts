/** docs/evidence.md's table of limits held to the input schema and the constants that enforce them. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { docTable } from "../../docs-table";
import { CITATION_CHECK_BYTES, MAX_CHECKED_CITATIONS } from "../../plan-engine/citations";
import {
  evidenceInput,
  MAX_PLAN_CLAIMS,
  MAX_PLAN_EVIDENCE_BYTES,
  MAX_PLAN_SOURCES,
} from "./record-evidence";

type Schema = {
  maxItems?: number;
  maxLength?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
};

/** The schema at `path` (property names, `[]` for an array's items) in `schema`. */
function at(schema: Schema, ...path: string[]): Schema {
  return path.reduce<Schema>((node, key) => {
    const next = key === "[]" ? node.items : node.properties?.[key];
    if (next === undefined) throw new Error(`no ${path.join(".")}`);
    return next;
  }, schema);
}

describe("docs/evidence.md's limits", () => {
  it("are those the schema and the per-plan constants enforce, row by row", () => {
    const schema = z.toJSONSchema(evidenceInput, { io: "input", unrepresentable: "any" }) as Schema;
    const source = (field: string) => at(schema, "sources", "[]", field).maxLength;
    const claim = (...path: string[]) => at(schema, "claims", "[]", ...path);
    const citation = (field: string) => claim("supports", "[]", field).maxLength;
    expect(claim("contradicts").maxItems).toBe(claim("supports").maxItems);
    expect(citation("source")).toBe(source("url"));
    // Each row's numbers, in the order its limit cell gives them.
    const limits: Record<string, (number | undefined)[]> = {
      "sources per plan": [MAX_PLAN_SOURCES],
      "claims per plan": [MAX_PLAN_CLAIMS],
      "`evidence.sources` per call": [at(schema, "sources").maxItems],
      "`evidence.claims` per call": [at(schema, "claims").maxItems],
      "`supports`, `contradicts` per claim": [claim("supports").maxItems],
      "a source's `url` / `title` / `extract`": [source("url"), source("title"), source("extract")],
      "a claim's `text`, a citation's `quote` / `locator`": [
        claim("text").maxLength,
        citation("quote"),
        citation("locator"),
      ],
      "all of a plan's evidence together (links, titles, extracts, claims, quotes, locators)": [
        MAX_PLAN_EVIDENCE_BYTES / 1024 / 1024,
      ],
      "citations checked in a deliverable": [
        MAX_CHECKED_CITATIONS,
        CITATION_CHECK_BYTES / 1024,
        source("url"),
      ],
    };
    const documented = docTable("docs/evidence.md", "what", "## Limits").map(
      ([what = "", limit = ""]) => [
        what,
        [...limit.matchAll(/\d[\d,]*/g)].map((match) => Number(match[0].replaceAll(",", ""))),
      ],
    );
    expect(documented).toEqual(Object.entries(limits));
  });
});
