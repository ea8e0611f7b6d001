/**
 * docs/architecture.md's map of lib/services ("`lib/services`, by kind") holds
 * to the tree: every folder has its row, a row names no file its folder does
 * not hold, and every file of a folder is named in its row but a use case's
 * own (`verb-noun.ts` exporting `verbNoun`), which its name and its folder's
 * row already place, so a new use case needs no edit of the map; every
 * path the page names exists; and each symbol its table "where each rule
 * lives" names is defined in the file it is named beside.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docTable } from "../docs-table";

/** The folders of lib/services, each with its source files (tests are not part of the map). */
function servicesTree(): Map<string, string[]> {
  const entries = readdirSync("lib/services", { withFileTypes: true });
  return new Map(
    entries
      .filter((entry) => entry.isDirectory())
      .map((folder) => [
        `${folder.name}/`,
        readdirSync(`lib/services/${folder.name}`)
          .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
          .sort(),
      ]),
  );
}

/** The map's rows: each folder with the file names (`name.ts`) its row gives. */
function documentedTree(): Map<string, string[]> {
  const doc = readFileSync("docs/architecture.md", "utf8");
  const start = doc.indexOf("### `lib/services`, by kind");
  const section = doc.slice(start, doc.indexOf("\n## ", start));
  return new Map(
    section
      .split("\n")
      .filter((line) => /^\| `[\w-]+\/` \|/.test(line))
      .map((line) => {
        const [, folder = "", what = ""] = line.split("|").map((cell) => cell.trim());
        const names = [...what.matchAll(/`([\w-]+\.ts)`/g)].map((match) => match[1] ?? "");
        return [folder.replaceAll("`", ""), [...new Set(names)].sort()];
      }),
  );
}

/** A use case's own file: it exports the function its name says (`list-plan-reviews.ts`: `listPlanReviews`). */
function isUseCaseFile(folder: string, file: string): boolean {
  const name = file
    .slice(0, -".ts".length)
    .replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
  const source = readFileSync(path.join("lib/services", folder, file), "utf8");
  return new RegExp(`^export (?:async )?function ${name}\\b`, "m").test(source);
}

describe("docs/architecture.md's map of lib/services", () => {
  it("has a row for each folder, naming no file it does not hold", () => {
    const tree = servicesTree();
    const documented = documentedTree();
    expect(tree.size).toBeGreaterThan(5);
    expect([...documented.keys()].sort()).toEqual([...tree.keys()].sort());
    const absent = [...documented].flatMap(([folder, files]) =>
      files.filter((file) => !tree.get(folder)?.includes(file)).map((file) => folder + file),
    );
    expect(absent).toEqual([]);
  });

  it("names each file of a folder in its row, but a use case's own", () => {
    const documented = documentedTree();
    const unnamed = [...servicesTree()].flatMap(([folder, files]) =>
      files
        .filter((file) => !documented.get(folder)?.includes(file))
        .filter((file) => !isUseCaseFile(folder, file))
        .map((file) => folder + file),
    );
    expect(unnamed).toEqual([]);
  });

  it("has no source file at lib/services' top level, where no row would name it", () => {
    const top = readdirSync("lib/services", { withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith(".test.ts"))
      .map((entry) => entry.name);
    expect(top).toEqual([]);
  });

  it("names no path that does not exist", () => {
    const doc = readFileSync("docs/architecture.md", "utf8");
    const paths = [
      ...doc.matchAll(/`((?:lib|app|drizzle|tests|scripts|e2e|cards)\/[\w/.()[\]-]*\.[a-z]+)`/g),
    ].map((match) => match[1] ?? "");
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => !existsSync(path))).toEqual([]);
  });
});

/**
 * Whether `file` defines `name`: a declaration or a schema's key (lib/env.ts's
 * variables) in TypeScript, the name anywhere in a migration's SQL.
 */
function defines(file: string, name: string): boolean {
  const source = readFileSync(file, "utf8");
  if (file.endsWith(".sql")) return source.includes(name);
  return new RegExp(
    `\\b(?:function\\*?|const|let|class|type|interface|enum)\\s+${name}\\b|export\\s*\\{[^}]*\\b${name}\\b|^\\s+${name}:`,
    "m",
  ).test(source);
}

/** The source files a path of the table names: a file, or a folder's (`lib/services/audit/`). */
function filesAt(named: string): string[] {
  if (!named.endsWith("/")) return [named];
  return readdirSync(named)
    .filter((entry) => entry.endsWith(".ts") && !entry.endsWith(".test.ts"))
    .map((entry) => path.join(named, entry));
}

const isPath = (name: string) => /\.(?:tsx?|sql)$|\/$/.test(name);
/** An identifier in backticks is a symbol (`people_only`, a value, and `User feedback:`, text, are not). */
const isSymbol = (name: string) => /^(?:[a-z]+[A-Z]\w*|[A-Z]\w*)$/.test(name);

/**
 * Each symbol a "where each rule lives" file cell names, with the path it is
 * named beside: the path before it ("`a.ts` (`f`, `g`)"), or the one right
 * after it when it says so ("`f` in `a.ts`", "`f` (`a.ts`)"). A bare file name
 * (`audit-key.ts`) is in the folder of the path before it.
 */
function symbolsBeside(cell: string): { symbol: string; path: string }[] {
  let folder = "";
  const names = [...cell.matchAll(/`([^`]+)`/g)].map((match) => {
    const name = match[1] ?? "";
    const end = (match.index ?? 0) + match[0].length;
    const next = cell.indexOf("`", end);
    const between = next === -1 ? "" : cell.slice(end, next);
    if (!isPath(name)) return { name, between };
    const full = name.includes("/") ? name : path.join(folder, name);
    folder = full.endsWith("/") ? full : path.dirname(full);
    return { name: full, between };
  });
  return names.flatMap(({ name, between }, index) => {
    if (!isSymbol(name)) return [];
    const after = names[index + 1];
    const before = names.slice(0, index).findLast((entry) => isPath(entry.name));
    const beside =
      after && isPath(after.name) && (/^\s*(?:in|\()\s*$/.test(between) || !before)
        ? after
        : before;
    return [{ symbol: name, path: beside?.name ?? "" }];
  });
}

describe("docs/architecture.md's table of where each rule lives", () => {
  it("names, beside each symbol, a file that defines it", () => {
    const rows = docTable("docs/architecture.md", "rule");
    expect(rows.length).toBeGreaterThan(30);
    const pairs = rows.flatMap(([rule = "", cell = ""]) =>
      symbolsBeside(cell).map((pair) => ({ rule, ...pair })),
    );
    expect(pairs.length).toBeGreaterThan(30);
    const wrong = pairs
      .filter(
        ({ symbol, path: named }) =>
          !existsSync(named) || !filesAt(named).some((file) => defines(file, symbol)),
      )
      .map(({ rule, symbol, path: named }) => `${rule}: ${symbol} in ${named || "no path"}`);
    expect(wrong).toEqual([]);
  });
});
