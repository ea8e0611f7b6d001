/**
 * Imports run down the layers (docs/architecture.md, "The layers"): the use
 * cases import no door (not the web's session or actions, not the OAuth or MCP
 * routes, not the pages), and the web door imports neither the MCP nor the
 * OAuth door; what two of them share lives below them (`lib/http`, `lib/services`).
 * And no file of lib/ imports itself through others: what two files both need
 * lives in a third.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

/** An import from one of `folders` of lib/, or from app/, relative or by the `@/` alias. */
function importsFrom(folders: string[]): RegExp {
  const names = folders.join("|");
  return new RegExp(`from "(?:(?:\\.\\./)+(?:${names})/|@/(?:app|lib/(?:${names}))/)`);
}

const LAYERS = [
  { folder: "lib/services", above: importsFrom(["auth", "oauth", "web", "mcp"]) },
  { folder: "lib/web", above: importsFrom(["oauth", "mcp"]) },
];

describe.each(LAYERS)("$folder", ({ folder, above }) => {
  it("imports nothing from the doors above or beside it", () => {
    const files = (readdirSync(folder, { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") || file.endsWith(".tsx"),
    );
    const upward = files.flatMap((file) =>
      readFileSync(join(folder, file), "utf8")
        .split("\n")
        .filter((line) => above.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(upward).toEqual([]);
  });
});

/** lib/'s source files, each with the files of lib/ it imports (types too). */
function importGraph(): Map<string, string[]> {
  const files = (readdirSync("lib", { recursive: true }) as string[])
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => join("lib", file));
  const resolve = (from: string, specifier: string): string | undefined => {
    const base = specifier.startsWith("@/")
      ? specifier.slice(2)
      : specifier.startsWith(".")
        ? normalize(join(dirname(from), specifier))
        : undefined;
    if (!base) return undefined;
    return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((file) => existsSync(file));
  };
  return new Map(
    files.map((file) => {
      const specifiers = [...readFileSync(file, "utf8").matchAll(/\bfrom "([^"]+)"/g)].map(
        (match) => match[1] ?? "",
      );
      const targets = specifiers.flatMap((specifier) => resolve(file, specifier) ?? []);
      return [file, targets.filter((target) => target.startsWith("lib/"))];
    }),
  );
}

/** The import circles of `graph`: each strongly connected set of more than one file, or a file importing itself (Tarjan's). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) ?? 0);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const part: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      part.push(member);
      if (member === file) break;
    }
    if (part.length > 1 || graph.get(file)?.includes(file)) found.push(part.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe("lib/", () => {
  it("has no import circle", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(circles(graph)).toEqual([]);
  });

  it("finds a circle where there is one", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(circles(graph)).toEqual([["a", "b", "c"]]);
  });
});
