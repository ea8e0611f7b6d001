import { describe, expect, it } from "vitest";
import {
  generateSetupCode,
  hashSetupCode,
  normalizeSetupCode,
  setupCodeAnnouncement,
} from "./setup-codes";

describe("setup codes", () => {
  it("are four groups of four from Crockford's alphabet, and differ", () => {
    const codes = new Set(Array.from({ length: 50 }, generateSetupCode));
    expect(codes.size).toBe(50);
    for (const code of codes)
      expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){3}$/);
  });

  it("forgive case, spaces, dashes and look-alike letters when typed", () => {
    expect(normalizeSetupCode(" 7kqf-m2xd 9rtb-wp4h ")).toBe("7KQFM2XD9RTBWP4H");
    expect(normalizeSetupCode("O0IL")).toBe("0011");
    expect(hashSetupCode("7kqf m2xd 9rtb wp4h")).toBe(hashSetupCode("7KQF-M2XD-9RTB-WP4H"));
    expect(hashSetupCode("7KQF-M2XD-9RTB-WP4J")).not.toBe(hashSetupCode("7KQF-M2XD-9RTB-WP4H"));
  });

  it("name the address the server is reached at, not a fixed port", () => {
    const lines = setupCodeAnnouncement("7KQF-M2XD-9RTB-WP4H", "http://127.0.0.1:4123");
    expect(lines).toContain("Open http://127.0.0.1:4123/setup and enter");
    expect(lines).not.toContain(":3000");
  });
});
