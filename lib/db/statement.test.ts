import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { arrayParam, executedText, readWhenNeeded } from "./statement";

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
});
