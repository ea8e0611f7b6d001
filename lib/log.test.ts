/** What reaches the log of a failed query: its code and masked reason, never the statement or its values. */
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { describeForLog, maskQueriesInConsole, messageForLog } from "./log";

describe("errors in the log", () => {
  const failed = new DrizzleQueryError(
    'update "webhook_endpoint" set "secret" = $1 where "id" = $2',
    ["whsec_the-secret", "not-a-uuid"],
    Object.assign(new Error('invalid input syntax for type uuid: "not-a-uuid"'), {
      code: "22P02",
    }),
  );

  it("keeps a failed query's statement and values out", () => {
    for (const text of [describeForLog(failed), messageForLog(failed)]) {
      expect(text).not.toContain("whsec_the-secret");
      expect(text).not.toContain("not-a-uuid");
      expect(text).not.toContain("webhook_endpoint");
      expect(text).toContain("a database query failed (22P02)");
    }
    // Where it was raised stays, to find the bug.
    expect(describeForLog(failed)).toMatch(/\n\s+at /);
  });

  it("masks the values PostgreSQL quotes in a constraint's detail, also inside a cause", () => {
    const duplicate = new DrizzleQueryError(
      "insert ...",
      ["cairn_rt_x"],
      Object.assign(
        new Error('duplicate key value violates unique constraint "oauth_token_token_hash_unique"'),
        { code: "23505" },
      ),
    );
    const wrapped = new Error("the token was not stored", { cause: duplicate });
    const text = describeForLog(wrapped);
    expect(text).toContain("the token was not stored");
    expect(text).toContain("(23505)");
    expect(text).not.toContain("cairn_rt_x");
    expect(text).not.toContain("oauth_token_token_hash_unique");
  });

  it("recognises a failed query by its shape: another copy of drizzle's class, postgres.js, PGlite", () => {
    // The production build bundles drizzle's error class more than once: same shape, other class.
    class CopiedQueryError extends Error {
      constructor(
        readonly query: string,
        readonly params: unknown[],
        override readonly cause: unknown,
      ) {
        super(`Failed query: ${query}\nparams: ${params.join(",")}`);
      }
    }
    // postgres.js: the statement and values as properties that are not enumerable.
    const postgresJs = Object.defineProperties(
      Object.assign(new Error('relation "api_key" does not exist'), {
        severity: "ERROR",
        code: "42P01",
      }),
      {
        query: { value: 'select * from "api_key" where "key_hash" = $1', enumerable: false },
        parameters: { value: ["the-key-hash"], enumerable: false },
      },
    );
    // PGlite: the same as plain fields, with PostgreSQL's detail quoting the row.
    const pglite = Object.assign(new Error("duplicate key value violates unique constraint"), {
      severity: "ERROR",
      code: "23505",
      detail: "Key (key_hash)=(the-key-hash) already exists.",
      query: "insert ...",
      params: ["the-key-hash"],
    });
    for (const error of [
      new CopiedQueryError(
        'select * from "api_key" where "key_hash" = $1',
        ["the-key-hash"],
        postgresJs,
      ),
      postgresJs,
      pglite,
      new Error("Could not check an API key", {
        cause: new CopiedQueryError("select 1", ["the-key-hash"], pglite),
      }),
    ]) {
      for (const text of [describeForLog(error), messageForLog(error.cause ?? error)]) {
        expect(text).not.toContain("the-key-hash");
        expect(text).not.toContain("key_hash");
        expect(text).not.toContain("api_key");
        expect(text).toMatch(/a database query failed \((42P01|23505)\)/);
      }
    }
  });

  it("logs other errors with their message and stack", () => {
    expect(describeForLog(new Error("plain failure"))).toMatch(/^Error: plain failure\n\s+at /);
    expect(messageForLog("text")).toBe("text");
  });

  it("masks a failed query in what other code prints to the console", () => {
    const printed: unknown[][] = [];
    const print = (...args: unknown[]) => {
      printed.push(args);
    };
    const target = { error: print, warn: print, log: print, info: print };
    maskQueriesInConsole(target);
    target.error(" ⨯", new Error("rendering failed", { cause: failed }));
    target.error(
      `[auth][cause]: Error: Failed query: select 1\nparams: whsec_the-secret\n    at x`,
    );
    target.error("plain", 3);
    const text = JSON.stringify(printed.map((args) => args.map(String)));
    expect(text).not.toContain("whsec_the-secret");
    expect(text).toContain("a database query failed");
    expect(printed[2]).toEqual(["plain", 3]);
  });
});
