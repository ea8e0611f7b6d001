/**
 * Writes lib/mcp/tools/index.ts, the `TOOLS` registry, from the tool files
 * beside it: every `export const <name>Tool = defineTool(` in every file of
 * lib/mcp/tools, files in name order, tools in their file's order. A new tool
 * is its file alone; nobody keeps the list by hand (docs/architecture.md,
 * "A tool"). The index is not committed: `npm run typecheck`, `lint`, `build`,
 * `dev` and vitest write it first, and rewrite it only when it changed, so a
 * running `next dev` is not sent a change that is none.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const TOOLS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "../lib/mcp/tools");
const INDEX = "index.ts";
const TOOL_EXPORT = /^export const (\w+Tool) = defineTool\(/gm;

/** The index's text for the tool files in `dir`. */
export function toolIndexSource(dir: string = TOOLS_DIR): string {
  // By module name, as biome orders imports ("store-research" before "store-research-output").
  const modules = readdirSync(dir)
    .filter((file) => file.endsWith(".ts") && file !== INDEX && !file.endsWith(".test.ts"))
    .map((file) => file.slice(0, -".ts".length))
    .sort();
  const imports: string[] = [];
  const names: string[] = [];
  for (const module of modules) {
    const found = [
      ...readFileSync(path.join(dir, `${module}.ts`), "utf8").matchAll(TOOL_EXPORT),
    ].map((match) => match[1] ?? "");
    if (found.length === 0) continue;
    const from = `"./${module}"`;
    const specifiers = [...found].sort();
    const single = `import { ${specifiers.join(", ")} } from ${from};`;
    // biome's line width (100): a longer import is one name a line, as it formats it.
    imports.push(
      single.length <= 100
        ? single
        : `import {\n${specifiers.map((name) => `  ${name},`).join("\n")}\n} from ${from};`,
    );
    names.push(...found);
  }
  return [
    "// Written by scripts/tool-index.ts from the tool files here; not committed, not edited.",
    ...imports,
    "",
    "/** Every tool Cairn serves, in the order tools/list shows them (by file). */",
    "export const TOOLS = [",
    ...names.map((name) => `  ${name},`),
    "];",
    "",
  ].join("\n");
}

/** Writes the index when it is missing or differs; true when it wrote. */
export function writeToolIndex(dir: string = TOOLS_DIR): boolean {
  const file = path.join(dir, INDEX);
  const source = toolIndexSource(dir);
  if (existsSync(file) && readFileSync(file, "utf8") === source) return false;
  writeFileSync(file, source);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  writeToolIndex();
}
