/**
 * Password hashing with scrypt from Node's own crypto: memory-hard, salted, and no
 * native dependency to build on a fresh machine. Stored as
 * `scrypt$N$r$p$salt$hash`, so every hash says how it was made: hashes made with
 * older parameters still verify, and `needsRehash` tells sign-in to upgrade them.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

type ScryptCost = { N: number; r: number; p: number };

const scrypt = promisify(scryptCallback) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: ScryptCost & { maxmem: number },
) => Promise<Buffer>;

/**
 * OWASP's recommendation for scrypt: N = 2^17, r = 8, p = 1, which needs 128 MiB
 * and about half a second of one core per hash. Earlier releases used N = 2^14.
 */
export const PASSWORD_COST: Readonly<ScryptCost> = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

/**
 * Bounds on the parameters a stored hash may name, so a corrupt or planted row
 * cannot make one sign-in allocate gigabytes (1 GiB at most here).
 */
const MAX_N = 2 ** 20;
const MAX_R = 16;
const MAX_P = 16;

/** OpenSSL's scrypt needs 128·r·(N + 2) bytes for V and 128·r·p for B; maxmem must cover both. */
function memoryFor({ N, r, p }: ScryptCost): number {
  return 128 * r * (N + p + 2);
}

type ParsedHash = ScryptCost & { salt: Buffer; hash: Buffer };

function format(cost: ScryptCost, salt: Buffer, hash: Buffer): string {
  return ["scrypt", cost.N, cost.r, cost.p, salt.toString("base64"), hash.toString("base64")].join(
    "$",
  );
}

function parse(stored: string): ParsedHash | undefined {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash || rest.length > 0) return undefined;
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  const powerOfTwo = Number.isInteger(cost.N) && cost.N > 1 && (cost.N & (cost.N - 1)) === 0;
  if (!powerOfTwo || cost.N > MAX_N) return undefined;
  if (!Number.isInteger(cost.r) || cost.r < 1 || cost.r > MAX_R) return undefined;
  if (!Number.isInteger(cost.p) || cost.p < 1 || cost.p > MAX_P) return undefined;
  const parsed = { ...cost, salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") };
  return parsed.hash.length > 0 ? parsed : undefined;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const hash = await scrypt(password, salt, KEY_LENGTH, {
    ...PASSWORD_COST,
    maxmem: memoryFor(PASSWORD_COST),
  });
  return format(PASSWORD_COST, salt, hash);
}

/** Checks a password against a stored hash made with any parameters within bounds. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const cost = { N: parsed.N, r: parsed.r, p: parsed.p };
  const actual = await scrypt(password, parsed.salt, parsed.hash.length, {
    ...cost,
    maxmem: memoryFor(cost),
  });
  return actual.length === parsed.hash.length && timingSafeEqual(actual, parsed.hash);
}

/** Whether a stored hash was made with other parameters than today's: re-hash it at the next sign-in. */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  return (
    !parsed ||
    parsed.N !== PASSWORD_COST.N ||
    parsed.r !== PASSWORD_COST.r ||
    parsed.p !== PASSWORD_COST.p ||
    parsed.hash.length !== KEY_LENGTH
  );
}

/**
 * A well-formed hash of no password, with today's parameters: checking a sign-in
 * for an unknown e-mail against it takes as long as a real check, so timing does
 * not reveal which e-mails exist.
 */
export const DUMMY_PASSWORD_HASH = format(
  PASSWORD_COST,
  Buffer.alloc(SALT_LENGTH),
  Buffer.alloc(KEY_LENGTH),
);
