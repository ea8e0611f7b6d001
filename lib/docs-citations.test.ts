import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// The repository stands on its own: every document a comment names is in docs/.
function sources(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path);
    return /\.(ts|tsx|mjs)$/.test(name) ? [path] : [];
  });
}

describe("documents named in comments", () => {
  it("exist under docs/", () => {
    const files = ["lib", "app", "tests", "e2e", "bench", "scripts"].flatMap(sources);
    const missing = files.flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/docs\/[\w-]+\.md/g)]
        .map((match) => match[0])
        .filter((doc) => !existsSync(doc))
        .map((doc) => `${file}: ${doc}`),
    );
    expect(missing).toEqual([]);
  });
});

/** A path as written in prose, without the parenthesis that closes the sentence's aside. */
function balanced(path: string): string {
  const count = (char: string) => path.split(char).length - 1;
  return path.endsWith(")") && count(")") > count("(") ? balanced(path.slice(0, -1)) : path;
}

describe("files named in docs/", () => {
  it("exist, so a link from a document leads somewhere", () => {
    const docs = readdirSync("docs").map((name) => join("docs", name));
    const missing = docs.flatMap((doc) =>
      [
        ...readFileSync(doc, "utf8").matchAll(
          /(?:lib|app|tests|e2e|scripts|bench|drizzle|skills)\/[\w\-./[\]()*]*[\w\]/)*]/g,
        ),
      ]
        .map((match) => balanced(match[0]))
        // A pattern (`tests/mcp-*.test.ts`) names a kind of file, not one.
        .filter((path) => !path.includes("*") && !existsSync(path))
        .map((path) => `${doc}: ${path}`),
    );
    expect(missing).toEqual([]);
  });
});
