/**
 * When a snoozed review comes back (docs/reviews.md, "Snooze"): in an hour,
 * tomorrow morning or at a chosen time, the last two read in the reviewer's
 * own time zone (their browser's IANA name). Pure: the clock is an argument.
 */
import { AppError } from "./app-error";

export const SNOOZE_CHOICES = ["hour", "tomorrow", "at"] as const;
export type SnoozeChoice = (typeof SNOOZE_CHOICES)[number];

/** The furthest a snooze may reach: a review snoozed for longer is better handed over. */
export const SNOOZE_MAX_DAYS = 30;
/** "Tomorrow morning": this hour on the reviewer's clock. */
export const SNOOZE_MORNING_HOUR = 9;
/** The longest time zone name taken (the IANA names are far shorter). */
export const TIME_ZONE_MAX_CHARS = 64;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

// An IANA name ("Europe/Paris", "America/Argentina/Buenos_Aires", "Etc/GMT+5",
// "UTC"), never an offset or an abbreviation, which Intl would also take.
const ZONE_NAME = /^(?:UTC|[A-Z][A-Za-z_-]*(?:\/[A-Za-z0-9_+-]+){1,2})$/;

/** Whether `zone` is an IANA time zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (zone.length > TIME_ZONE_MAX_CHARS || !ZONE_NAME.test(zone)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

type WallTime = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
};

/** The clock in `zone` at `instant` (milliseconds), to the second. */
function wallTimeAt(instant: number, zone: string): WallTime {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(instant);
  const part = (type: Intl.DateTimeFormatPartTypes) =>
    Number(parts.find((p) => p.type === type)?.value);
  return {
    year: part("year"),
    month: part("month"),
    day: part("day"),
    hour: part("hour"),
    minute: part("minute"),
    second: part("second"),
  };
}

const asUtc = (t: WallTime) => Date.UTC(t.year, t.month - 1, t.day, t.hour, t.minute, t.second);

/**
 * The instant the clock in `zone` shows `wall`. The zone's offset is read at a
 * first guess and again at the instant it gives, which settles across a
 * daylight-saving change; a time the change skips comes out an hour on.
 */
export function instantOfWallTime(wall: WallTime, zone: string): number {
  const local = asUtc(wall);
  const offsetAt = (instant: number) =>
    asUtc(wallTimeAt(instant, zone)) - Math.floor(instant / 1000) * 1000;
  const guess = local - offsetAt(local);
  return local - offsetAt(guess);
}

// A datetime-local field's value: a date and a time of day, no zone.
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

function parseWallTime(text: string): WallTime | undefined {
  const match = LOCAL_TIME.exec(text);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((n) => Number(n ?? 0));
  const wall = { year, month, day, hour, minute, second } as WallTime;
  // Date.UTC rolls 31 April over to 1 May: a date that does not round-trip does not exist.
  const back = new Date(asUtc(wall));
  if (
    back.getUTCFullYear() !== wall.year ||
    back.getUTCMonth() !== wall.month - 1 ||
    back.getUTCDate() !== wall.day ||
    wall.hour > 23 ||
    wall.minute > 59 ||
    wall.second > 59
  ) {
    return undefined;
  }
  return wall;
}

export type SnoozeRequest = {
  until: SnoozeChoice;
  /** For `at`: the reviewer's local date and time, `YYYY-MM-DDTHH:MM[:SS]`. */
  at?: string | undefined;
  /** The reviewer's IANA time zone, in which `tomorrow` and `at` are read. */
  timeZone: string;
};

function invalid(message: string, field: string): AppError {
  return new AppError("VALIDATION_ERROR", `${message} Nothing was changed.`, { field });
}

/**
 * When the review comes back: a time after `now` and at most SNOOZE_MAX_DAYS
 * ahead, else VALIDATION_ERROR naming the field.
 */
export function snoozeUntil(request: SnoozeRequest, now: number): Date {
  if (!isTimeZone(request.timeZone)) {
    throw invalid(
      `"${request.timeZone.slice(0, TIME_ZONE_MAX_CHARS)}" is not a time zone: send an IANA name such as "Europe/Paris".`,
      "timeZone",
    );
  }
  let until: number;
  if (request.until === "hour") {
    until = now + HOUR_MS;
  } else if (request.until === "tomorrow") {
    const today = wallTimeAt(now, request.timeZone);
    // Date.UTC carries the 32nd of a month over to the next, so day + 1 is tomorrow.
    const tomorrow = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
    until = instantOfWallTime(
      {
        year: tomorrow.getUTCFullYear(),
        month: tomorrow.getUTCMonth() + 1,
        day: tomorrow.getUTCDate(),
        hour: SNOOZE_MORNING_HOUR,
        minute: 0,
        second: 0,
      },
      request.timeZone,
    );
  } else {
    const wall = request.at === undefined ? undefined : parseWallTime(request.at);
    if (!wall) throw invalid("Choose the date and time the review should come back.", "at");
    until = instantOfWallTime(wall, request.timeZone);
  }
  if (until <= now) throw invalid("That time has passed: choose a time to come.", "at");
  if (until > now + SNOOZE_MAX_DAYS * DAY_MS) {
    throw invalid(
      `A review can be snoozed for at most ${SNOOZE_MAX_DAYS} days: choose an earlier time, or hand it over.`,
      "at",
    );
  }
  return new Date(until);
}
