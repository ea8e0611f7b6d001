import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { arrayParam, executedText, readWhenNeeded, statement, statementAfter } from "./statement";

describe("arrayParam", () => {
  it("quotes each value, escaping quotes and backslashes, in one array literal", () => {
    expect(arrayParam([])).toBe("{}");
    expect(arrayParam(["a", 'say "hi"', "back\\slash", "x,y"])).toBe(
      '{"a","say \\"hi\\"","back\\\\slash","x,y"}',
    );
  });

  it("writes a null as the array's NULL, and the text NULL quoted", () => {
    expect(arrayParam(["NULL", null])).toBe('{"NULL",NULL}');
  });
});

describe("readWhenNeeded", () => {
  it("reads each $n as the n-th of one text[] and passes the statement's expressions as text", () => {
    expect(readWhenNeeded("select to_json($2::int + $1::int + $2::int)", ["$7::int", "$3"])).toBe(
      "read_json($read$select to_json(($1[2])::int + ($1[1])::int + ($1[2])::int)$read$, " +
        "array[($7::int)::text, ($3)::text])",
    );
  });

  it("refuses a read given the wrong number of parameters, or holding its quote", () => {
    expect(() => readWhenNeeded("select to_json($1::text || $2::text)", ["$1"])).toThrow(
      /takes 2 parameters; it was given 1/,
    );
    expect(() => readWhenNeeded("select to_json($read$x$read$::text)", [])).toThrow(
      /holds "\$read"/,
    );
    expect(() => readWhenNeeded("select to_json('x'::text) as $read", [])).toThrow(
      /holds "\$read"/,
    );
  });

  it("leaves a $n inside a literal, a quoted name, a dollar quote or a comment as it is", () => {
    // Each read, and the same text with its two parameters, and no other $n, rewritten.
    const reads: [read: string, rewritten: string][] = [
      [
        "select to_json($1::text || 'costs $2' || E'it\\'s $3' || $tag$ $4 $tag$ || $$ $5 $$)" +
          ' as "col $6" -- $7\n/* $8 */ from t where x$9 = $2::int',
        "select to_json(($1[1])::text || 'costs $2' || E'it\\'s $3' || $tag$ $4 $tag$ || $$ $5 $$)" +
          ' as "col $6" -- $7\n/* $8 */ from t where x$9 = ($1[2])::int',
      ],
      // Names may hold "$": "a$q$" and "c$q$" are two names, not a dollar quote around "$1".
      [
        "select to_json($2::int) as a$q$, to_json($1::int) as c$q$",
        "select to_json(($1[2])::int) as a$q$, to_json(($1[1])::int) as c$q$",
      ],
      // Backslashes escape only in an E string; quotes double; a line comment ends at \r too.
      [
        "select to_json($1::text || 'a\\' || '$2' || date'x\\' || 'it''s $3' || \"q\"\"$4\"" +
          " -- $5\r || $2::text) as é$q$, to_json($2::int) as ü$q$",
        "select to_json(($1[1])::text || 'a\\' || '$2' || date'x\\' || 'it''s $3' || \"q\"\"$4\"" +
          " -- $5\r || ($1[2])::text) as é$q$, to_json(($1[2])::int) as ü$q$",
      ],
    ];
    for (const [read, rewritten] of reads) {
      expect(readWhenNeeded(read, ["$1", "$2"])).toBe(
        `read_json($read$${rewritten}$read$, array[($1)::text, ($2)::text])`,
      );
    }
    expect(() => readWhenNeeded("select to_json('$1'::text)", ["$1"])).toThrow(
      /takes 0 parameters; it was given 1/,
    );
  });

  it("refuses a nested block comment, which it cannot read as PostgreSQL does", () => {
    expect(() => readWhenNeeded("select to_json($1::int) /* a /* b */ $2 */", ["$1"])).toThrow(
      /nested block comment/,
    );
  });
});

describe("statementAfter", () => {
  const row = z.object({ n: z.number() });

  it("counts each statement's parameters", () => {
    const first = statement("first", "select 1 as n where $1::int > 0", row);
    const then = statement("then", "select $2::int as n where $1::text <> 'x'", row);
    expect(statementAfter(first, then).takes).toEqual([1, 2]);
  });

  it("refuses a statement holding a $n that the database's plain rewrite would misread", () => {
    const first = statement("first", "select 1 as n where $1::int > 0", row);
    for (const text of [
      "select $1::int as n where 'x' <> '$9'",
      "select $1::int as n -- $4",
      "select $1::int as n$2",
    ]) {
      expect(() => statementAfter(first, statement("then", text, row))).toThrow(
        /holds a \$n in a literal, a comment or a name/,
      );
    }
  });
});

describe("executedText", () => {
  it("reads each value as the n-th of one text[], each as its text, and leaves raw text as it is", () => {
    const when = new Date("2026-12-05T05:00:00.000Z");
    expect(
      executedText(
        sql`select ${'a "b"'}::text, ${10}::int, ${when}::timestamptz, ${null}::uuid, ${sql.raw("500")}`,
      ),
    ).toEqual([
      "select ($1[1])::text, ($1[2])::int, ($1[3])::timestamptz, ($1[4])::uuid, 500",
      '{"a \\"b\\"","10","2026-12-05T05:00:00.000Z",NULL}',
    ]);
  });

  it("leaves a $n in raw text's literal as it is", () => {
    expect(executedText(sql`select ${"x"}::text, ${sql.raw("'$1 costs $2'")}`)).toEqual([
      "select ($1[1])::text, '$1 costs $2'",
      '{"x"}',
    ]);
  });
});
