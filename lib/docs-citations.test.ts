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
