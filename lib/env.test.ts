/** lib/env.ts's list of browser hosts: origins only, each refusal naming what is wrong. */
import { describe, expect, it } from "vitest";
import { parseEnv } from "./env";

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
