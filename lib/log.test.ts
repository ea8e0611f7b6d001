/** What reaches the log of a failed query: its code and masked reason, never the statement or its values. */
import { DrizzleQueryError } from "drizzle-orm/errors";
import { describe, expect, it } from "vitest";
import { describeForLog, messageForLog } from "./log";

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

  it("logs other errors with their message and stack", () => {
    expect(describeForLog(new Error("plain failure"))).toMatch(/^Error: plain failure\n\s+at /);
    expect(messageForLog("text")).toBe("text");
  });
});
