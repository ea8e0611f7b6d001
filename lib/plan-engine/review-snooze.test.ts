import { describe, expect, it } from "vitest";
import { isTimeZone, SNOOZE_MAX_DAYS, snoozeUntil } from "./review-snooze";

const at = (iso: string) => Date.parse(iso);
const DAY = 86_400_000;

describe("snoozeUntil", () => {
  it("in an hour", () => {
    const now = at("2026-11-28T19:30:00.000Z");
    expect(snoozeUntil({ until: "hour", timeZone: "Asia/Tokyo" }, now).toISOString()).toBe(
      "2026-11-28T20:30:00.000Z",
    );
  });

  it("tomorrow at 09:00 on the reviewer's clock, whose date may not be UTC's", () => {
    // 22:00 on the 27th in New York (EST, UTC-5): tomorrow is the 28th there.
    expect(
      snoozeUntil(
        { until: "tomorrow", timeZone: "America/New_York" },
        at("2026-11-28T03:00:00.000Z"),
      ).toISOString(),
    ).toBe("2026-11-28T14:00:00.000Z");
    // 07:30 on the 29th in Tokyo (UTC+9), the 28th in UTC: tomorrow is the 30th.
    expect(
      snoozeUntil(
        { until: "tomorrow", timeZone: "Asia/Tokyo" },
        at("2026-11-28T22:30:00.000Z"),
      ).toISOString(),
    ).toBe("2026-11-30T00:00:00.000Z");
    // Paris moves to summer time (UTC+2) in the night of 28 to 29 March 2026.
    expect(
      snoozeUntil(
        { until: "tomorrow", timeZone: "Europe/Paris" },
        at("2026-03-28T12:00:00.000Z"),
      ).toISOString(),
    ).toBe("2026-03-29T07:00:00.000Z");
    // The last day of a month: tomorrow is the first of the next.
    expect(
      snoozeUntil(
        { until: "tomorrow", timeZone: "UTC" },
        at("2026-12-31T10:00:00.000Z"),
      ).toISOString(),
    ).toBe("2027-01-01T09:00:00.000Z");
  });

  it("at a chosen local time, read in the reviewer's zone", () => {
    const now = at("2026-11-28T19:30:00.000Z");
    expect(
      snoozeUntil(
        { until: "at", at: "2026-12-01T10:30", timeZone: "Asia/Tokyo" },
        now,
      ).toISOString(),
    ).toBe("2026-12-01T01:30:00.000Z");
    expect(
      snoozeUntil({ until: "at", at: "2026-11-28T19:30:05", timeZone: "UTC" }, now).toISOString(),
    ).toBe("2026-11-28T19:30:05.000Z");
    // Up to SNOOZE_MAX_DAYS ahead, not beyond.
    const limit = new Date(now + SNOOZE_MAX_DAYS * DAY).toISOString().slice(0, 19);
    expect(snoozeUntil({ until: "at", at: limit, timeZone: "UTC" }, now).getTime()).toBe(
      now + SNOOZE_MAX_DAYS * DAY,
    );
  });

  it.each([
    [{ until: "at", at: "2026-11-28T19:29", timeZone: "UTC" }, "at", /has passed/],
    [{ until: "at", at: "2026-11-28T19:30", timeZone: "UTC" }, "at", /has passed/],
    [{ until: "at", at: "2026-12-28T19:31", timeZone: "UTC" }, "at", /at most 30 days/],
    [{ until: "at", at: "2026-02-30T09:00", timeZone: "UTC" }, "at", /Choose the date/],
    [{ until: "at", at: "2026-12-01T24:00", timeZone: "UTC" }, "at", /Choose the date/],
    [{ until: "at", at: "tomorrow", timeZone: "UTC" }, "at", /Choose the date/],
    [{ until: "at", timeZone: "UTC" }, "at", /Choose the date/],
    [{ until: "hour", timeZone: "+05:00" }, "timeZone", /not a time zone/],
    [{ until: "tomorrow", timeZone: "Mars/Olympus_Mons" }, "timeZone", /not a time zone/],
  ] as const)("refuses %j as a VALIDATION_ERROR on %s", (request, field, message) => {
    expect(() => snoozeUntil(request, at("2026-11-28T19:30:00.000Z"))).toThrow(
      expect.objectContaining({
        code: "VALIDATION_ERROR",
        metadata: { field },
        message: expect.stringMatching(message),
      }),
    );
  });
});

describe("isTimeZone", () => {
  it.each(["UTC", "Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Asia/Kolkata"])(
    "takes the IANA name %s",
    (zone) => expect(isTimeZone(zone)).toBe(true),
  );
  it.each([
    "",
    "+05:00",
    "GMT+5",
    "EST",
    "europe paris",
    "Mars/Olympus_Mons",
    `Europe/${"x".repeat(80)}`,
  ])("refuses %j", (zone) => expect(isTimeZone(zone)).toBe(false));
});
