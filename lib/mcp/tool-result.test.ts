import { describe, expect, it, vi } from "vitest";
import { toolError } from "./tool-result";

/** postgres.js's error for a standby refusing a write, as drizzle wraps it. */
const readOnly = new Error("Failed query: …", {
  cause: Object.assign(new Error("cannot execute INSERT in a read-only transaction"), {
    code: "25006",
  }),
});

describe("toolError for an unavailable database", () => {
  it("answers the retryable DATABASE_UNAVAILABLE, not INTERNAL_ERROR", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const result = toolError(readOnly);
      expect(result.errorCode).toBe("DATABASE_UNAVAILABLE");
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([
        {
          type: "text",
          text: expect.stringMatching(
            /^DATABASE_UNAVAILABLE: The database is unavailable .* retry in 2 seconds/,
          ),
        },
      ]);
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });
});
