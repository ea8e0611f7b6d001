/**
 * One-time set-up codes: on a fresh install (no user yet) the first-run page asks
 * for one, so whoever reaches the page first cannot claim the install. Each server
 * start on a fresh install prints a new code to its log, and `npm run cairn --
 * setup-code` prints another; any of them opens the set-up, and all stop working
 * when the first admin is created. Only their SHA-256 is stored: a code has 80
 * random bits, so a fast hash is enough.
 */
import "server-only";
import { createHash, randomInt } from "node:crypto";
import { desc, eq, notInArray } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { setupCodes, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";

/** Crockford's base-32 alphabet: no I, L, O or U, so a code read aloud or retyped survives. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const GROUPS = 4;
const GROUP_LENGTH = 4;
/** Codes kept at most; older ones are dropped when a new one is made. */
const KEEP = 10;

/** A new code such as "7KQF-M2XD-9RTB-WP4H" (80 bits). */
export function generateSetupCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = "";
    for (let i = 0; i < GROUP_LENGTH; i++) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return groups.join("-");
}

/** The code as typed, made canonical: case, spaces and dashes do not matter, nor O/0 and I/L/1. */
export function normalizeSetupCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}

export function hashSetupCode(code: string): string {
  return createHash("sha256").update(normalizeSetupCode(code)).digest("hex");
}

/**
 * Stores a new code and returns it in clear, once. Refused once anyone has an
 * account: set-up is over.
 */
export async function issueSetupCode(db: Executor): Promise<string> {
  const [anyone] = await db.select({ id: users.id }).from(users).limit(1);
  if (anyone) {
    throw new AppError(
      "CONFLICT",
      "Cairn is already set up: setup codes are only for a fresh install. Sign in, or ask an admin for an account.",
    );
  }
  const code = generateSetupCode();
  await db.insert(setupCodes).values({ codeHash: hashSetupCode(code) });
  const newest = db
    .select({ id: setupCodes.id })
    .from(setupCodes)
    .orderBy(desc(setupCodes.createdAt), desc(setupCodes.id))
    .limit(KEEP);
  await db.delete(setupCodes).where(notInArray(setupCodes.id, newest));
  return code;
}

/** Whether a typed code is one of the current codes. */
export async function isSetupCodeValid(db: Executor, typed: string): Promise<boolean> {
  const normalized = normalizeSetupCode(typed);
  if (normalized.length !== GROUPS * GROUP_LENGTH) return false;
  const [row] = await db
    .select({ id: setupCodes.id })
    .from(setupCodes)
    .where(eq(setupCodes.codeHash, hashSetupCode(normalized)));
  return row !== undefined;
}

/** Ends the set-up: every code stops working (inside the first admin's transaction). */
export async function deleteSetupCodes(db: Executor): Promise<void> {
  await db.delete(setupCodes);
}

/**
 * How to get another code, in plain text (a person reads it in the browser or a
 * log, where Markdown backticks would show as they are). The embedded database
 * is one process's folder: the CLI cannot open it while the server holds it.
 */
export const ANOTHER_SETUP_CODE =
  "For another, restart the server (it prints a new one), or run npm run cairn -- setup-code on the server: with the embedded database (no DATABASE_URL), only while the server is stopped; with DATABASE_URL set, it can keep running.";

/**
 * The lines a server prints at start on a fresh install, with the address it
 * serves (`publicBaseUrl`: CAIRN_PUBLIC_URL, else the port it listens on).
 */
export function setupCodeAnnouncement(code: string, baseUrl: string): string {
  return [
    `Cairn: nobody has an account yet. Open ${baseUrl}/setup and enter this one-time code:`,
    `Cairn setup code: ${code}`,
    `It works until the first admin is created. ${ANOTHER_SETUP_CODE}`,
  ].join("\n");
}
