/**
 * Imports run down the layers as docs/architecture.md's table of them says
 * ("The layers"): each file of lib/, app/ and server.ts belongs to the layer
 * whose folder holds it most closely, and may import, of the other layers'
 * files, only those of the layers its row's "may import" cell names (a name
 * followed by "from `folder`" only from that folder of it). The engine's
 * "nothing" is nothing outside its folder, no package either. What lies in no
 * layer's folder (`lib/http`, `lib/env.ts`, `lib/log.ts`, …) is not a layer
 * crossing. And no file of lib/ imports itself through others: what two
 * files both need lives in a third.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";

/** The repository file an import names (relative or by the `@/` alias), or undefined for a package. */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = specifier.startsWith("@/")
    ? specifier.slice(2)
    : specifier.startsWith(".")
      ? normalize(join(dirname(from), specifier))
      : undefined;
  if (!base) return undefined;
  return [`${base}.ts`, `${base}.tsx`, join(base, "index.ts"), join(base, "index.tsx"), base].find(
    (file) => existsSync(file),
  );
}

/** What `file` imports, types too: each specifier with the repository file it names. */
function importsOf(file: string): { specifier: string; target: string | undefined }[] {
  return [...readFileSync(file, "utf8").matchAll(/\bfrom\s+"([^"]+)"/g)].map((match) => {
    const specifier = match[1] ?? "";
    return { specifier, target: resolveImport(file, specifier) };
  });
}

/** The source files (not tests) under `path`, or `path` itself when it is a file. */
function sourcesUnder(path: string): string[] {
  if (statSync(path).isFile()) return [path];
  return (readdirSync(path, { recursive: true }) as string[])
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => join(path, file));
}

type Layer = { name: string; folders: string[]; mayImport: string };

const LAYERS: Layer[] = docTable("docs/architecture.md", "layer").map(
  ([name = "", folders = "", mayImport = ""]) => ({
    name,
    folders: codeNames(folders).map((folder) => folder.replace(/\/$/, "")),
    mayImport,
  }),
);

const within = (file: string, folder: string) => file === folder || file.startsWith(`${folder}/`);

/** The layer whose folder holds `file` most closely (`app/api/mcp` before `app`), if any. */
function layerOf(file: string): { layer: Layer; folder: string } | undefined {
  return LAYERS.flatMap((layer) =>
    layer.folders.filter((folder) => within(file, folder)).map((folder) => ({ layer, folder })),
  ).sort((a, b) => b.folder.length - a.folder.length)[0];
}

/** Whether a file of `from` may import a file of `to`, as `from`'s "may import" cell says. */
function mayImport(from: Layer, file: string, to: Layer): boolean {
  if (from === to) return true;
  return from.mayImport.split(/[,;]/).some((item) => {
    const [, name, folder] = /^\s*(.+?)(?: from `([^`]+)`)?\s*(?:\(.*)?$/.exec(item) ?? [];
    return name === to.name && (folder === undefined || within(file, folder.replace(/\/$/, "")));
  });
}

describe("docs/architecture.md's layers", () => {
  it("name each layer's folders and what it may import", () => {
    expect(LAYERS.map((layer) => layer.name)).toEqual(
      expect.arrayContaining(["engine", "use cases", "MCP door", "web door", "storage"]),
    );
    for (const layer of LAYERS) expect(layer.folders.length, layer.name).toBeGreaterThan(0);
    const named = new Set(LAYERS.map((layer) => layer.name));
    for (const layer of LAYERS) {
      const items = layer.mayImport
        .split(/[,;]/)
        .map((item) => item.replace(/ from `[^`]+`|\(.*$/g, "").trim());
      expect(
        items.filter((item) => !named.has(item) && item !== "nothing" && item !== "—"),
        `${layer.name}'s "may import" names only layers`,
      ).toEqual([]);
    }
  });

  it.each(LAYERS)("$name imports only what its row says it may", (layer) => {
    const files = layer.folders
      .flatMap(sourcesUnder)
      .filter((file) => layerOf(file)?.layer === layer);
    expect(files.length).toBeGreaterThan(0);
    const nothing = layer.mayImport.startsWith("nothing");
    const wrong = files.flatMap((file) =>
      importsOf(file).flatMap(({ specifier, target }) => {
        if (nothing)
          return target !== undefined && layerOf(target)?.layer === layer
            ? []
            : [`${file}: ${specifier}`];
        const to = target === undefined ? undefined : layerOf(target)?.layer;
        return to === undefined || mayImport(layer, file, to)
          ? []
          : [`${file}: ${specifier} (${to.name})`];
      }),
    );
    expect(wrong).toEqual([]);
  });

  it("finds an import the table does not allow", () => {
    const engine = LAYERS.find((layer) => layer.name === "engine");
    const useCases = LAYERS.find((layer) => layer.name === "use cases");
    expect(engine && useCases && mayImport(engine, "lib/plan-engine/x.ts", useCases)).toBe(false);
  });
});

/** lib/'s source files, each with the files of lib/ it imports (types too). */
function importGraph(): Map<string, string[]> {
  const files = (readdirSync("lib", { recursive: true }) as string[])
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => join("lib", file));
  return new Map(
    files.map((file) => [
      file,
      importsOf(file).flatMap(({ target }) => (target?.startsWith("lib/") ? [target] : [])),
    ]),
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
