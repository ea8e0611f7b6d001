import { describe, expect, it } from "vitest";
import { isDatabaseUnavailable } from "./unavailable";

const withCode = (code: string) => Object.assign(new Error(code), { code });
/** How drizzle hands a driver's error on: wrapped, the driver's as its cause. */
const wrapped = (code: string) => new Error("Failed query: …", { cause: withCode(code) });

describe("isDatabaseUnavailable", () => {
  it.each([
    "CONNECTION_CLOSED",
    "CONNECT_TIMEOUT",
    "ECONNREFUSED",
    "COMMIT_NOT_CARRIED_OUT",
    "25006",
    "57P01",
    "57P03",
    "57014",
    "08006",
    "26000",
  ])("is true for %s, wrapped or not", (code) => {
    expect(isDatabaseUnavailable(withCode(code))).toBe(true);
    expect(isDatabaseUnavailable(wrapped(code))).toBe(true);
  });

  it.each(["23505", "22P02", "40001", "UNDEFINED_VALUE"])(
    "is false for %s, a fault of the call or of Cairn",
    (code) => {
      expect(isDatabaseUnavailable(wrapped(code))).toBe(false);
    },
  );

  it("is false for what is not an error", () => {
    expect(isDatabaseUnavailable("CONNECTION_CLOSED")).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});
