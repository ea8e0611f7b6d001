/**
 * lib/env.ts's list of browser hosts: origins only, each refusal naming what is
 * wrong; and the docs' tables of variables held to the schema.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "./docs-table";
import { ENV_VARIABLES, parseEnv } from "./env";

describe("CAIRN_MCP_CORS_ORIGINS", () => {
  it("is off unless set, and reads a list of origins", () => {
    expect(parseEnv({}).CAIRN_MCP_CORS_ORIGINS).toEqual([]);
    expect(
      parseEnv({ CAIRN_MCP_CORS_ORIGINS: " https://host.example/, http://localhost:8080 ," })
        .CAIRN_MCP_CORS_ORIGINS,
    ).toEqual(["https://host.example", "http://localhost:8080"]);
  });

  it("refuses what is not an origin, naming it", () => {
    for (const value of ["host.example", "https://host.example/app", "ftp://host.example", "*"]) {
      expect(() => parseEnv({ CAIRN_MCP_CORS_ORIGINS: value }), value).toThrow(
        `${value} is not an origin`,
      );
    }
  });
});

/** Read by the production server itself (`server.ts`), not by lib/env.ts. */
const SERVER_VARIABLES = ["HOST", "PORT"];

/** Each documented variable with its default cell, from a table headed "variable". */
function documented(doc: string, under?: string): [string, string][] {
  return docTable(doc, "variable", under).flatMap(([names = "", fallback = ""]) =>
    codeNames(names).map((name): [string, string] => [name, fallback]),
  );
}

describe("the docs' tables of variables", () => {
  it("docs/operations.md and docs/configuration.md list every variable, each once", () => {
    const all = [...ENV_VARIABLES, ...SERVER_VARIABLES].sort();
    expect(
      documented("docs/operations.md")
        .map(([name]) => name)
        .sort(),
    ).toEqual(all);
    // configuration.md leaves NODE_ENV to the npm scripts that set it.
    expect(
      documented("docs/configuration.md")
        .map(([name]) => name)
        .sort(),
    ).toEqual(all.filter((name) => name !== "NODE_ENV"));
  });

  it("give the defaults the schema applies", () => {
    const rows = [
      ...documented("docs/operations.md"),
      ...documented("docs/configuration.md"),
      ...documented("docs/reviews.md", "## Configuration"),
    ].filter(([name]) => !SERVER_VARIABLES.includes(name));
    const defaults = parseEnv({});
    for (const [name, fallback] of rows) {
      const value = /^`([^`]+)`/.exec(fallback)?.[1];
      const key = name as (typeof ENV_VARIABLES)[number];
      // A default written as a value is what the variable unset parses to.
      if (value !== undefined) expect(parseEnv({ [key]: value })[key], name).toEqual(defaults[key]);
      else expect(fallback, name).toMatch(/^(unset|generated|derived|(the )?stall threshold)/);
    }
  });

  it("give HOST and PORT the production server's defaults", () => {
    const server = readFileSync("server.ts", "utf8");
    expect(documented("docs/operations.md").filter(([name]) => name === "HOST")).toEqual([
      ["HOST", "`127.0.0.1`, `3000`"],
    ]);
    expect(server).toContain('process.env.HOST || "127.0.0.1"');
    expect(server).toContain("process.env.PORT || 3000");
  });
});
