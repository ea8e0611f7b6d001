/**
 * A cursor names its list (pagination.ts, `PageOrder`): each list reads only
 * the cursors it gave, and no two lists of lib/ share a name.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { planSteps, researchPlans } from "../../db/schema";
import { isCursorRefused, keyset } from "./pagination";

const ID = "6f1d0e4c-2b8a-4c4e-9a57-3f0d5b1c9e21";

/** A cursor `order`'s list gives after a page whose last row is at `at`. */
function cursorOf(order: Parameters<typeof keyset>[0], at: string): string {
  const rows = [0, 1].map(() => ({ positionAt: at, positionId: ID }));
  const { nextCursor } = keyset(order, undefined).pageOf(rows, 1);
  if (!nextCursor) throw new Error("a page with a row after it has a next cursor");
  return nextCursor;
}

function refusal(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  return expect.fail("the cursor should have been refused");
}

describe("a cursor", () => {
  const activePlans = { list: "active plans", at: researchPlans.updatedAt, id: researchPlans.id };
  const plansPage = { list: "plans page", at: researchPlans.updatedAt, id: researchPlans.id };

  it("is read by the list that gave it", () => {
    const page = keyset(activePlans, cursorOf(activePlans, "1764300000000000"));
    expect(page.where).toBeDefined();
  });

  it("of another list of the same rows in the same order is refused, naming the field", () => {
    const error = refusal(() => keyset(plansPage, cursorOf(activePlans, "1764300000000000")));
    expect(isCursorRefused(error)).toBe(true);
    expect(error).toMatchObject({
      code: "VALIDATION_ERROR",
      message: expect.stringMatching(/^cursor is not one this list gave: pass the previous/),
    });
    const steps = {
      list: "steps",
      at: planSteps.stepOrder,
      sequence: true as const,
      id: planSteps.id,
    };
    const stepsError = refusal(() =>
      keyset({ ...steps, list: "prior steps" }, cursorOf(steps, "3"), "stepsCursor"),
    );
    expect(stepsError).toMatchObject({
      message: expect.stringMatching(/^stepsCursor .* stepsNextCursor/),
    });
  });
});

describe("the lists of lib/", () => {
  it("each have a name of their own", () => {
    const files = (readdirSync("lib", { recursive: true }) as string[]).filter(
      (file) => file.endsWith(".ts") && !file.endsWith(".test.ts"),
    );
    const filesOf = new Map<string, string[]>();
    for (const file of files) {
      const text = readFileSync(join("lib", file), "utf8");
      if (!text.includes("keyset(")) continue;
      for (const [, name = ""] of text.matchAll(/\blist: "([^"]+)"/g)) {
        const named = filesOf.get(name) ?? [];
        if (!named.includes(file)) filesOf.set(name, [...named, file]);
      }
    }
    expect(filesOf.size).toBeGreaterThanOrEqual(12);
    expect([...filesOf].filter(([, named]) => named.length > 1)).toEqual([]);
  });
});
