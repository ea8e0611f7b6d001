/**
 * The key that signs audit chain heads (docs/audit.md, "Signed heads"). It
 * lives in Cairn's environment, never in the database, so rows written with
 * SQL alone cannot be signed: CAIRN_AUDIT_KEY, or, unset, a key derived from
 * AUTH_SECRET under a label of its own (so the session secret itself never
 * signs a head). Each signature stores its key's id; the keys a rotation
 * retired stay accepted while listed in CAIRN_AUDIT_PREVIOUS_KEYS.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { resolveAuthSecret } from "../../auth-secret";
import { env } from "../../env";

export type AuditKey = { id: string; key: Buffer };
export type AuditKeyring = { current: AuditKey; previous: readonly AuditKey[] };

/** What a signature covers: the chain's head in its plan and tenant. */
export type SignedHead = {
  tenantId: string;
  planId: string;
  chainLength: number;
  headDigest: string;
};

const DERIVED_KEY_LABEL = "cairn-audit-head-key/1";
const AUTH_SECRET_PREFIX = "auth-secret:";

function keyOf(key: Buffer): AuditKey {
  // A one-way name for the key: the signature says which key to check it with
  // and the database learns nothing it could sign with.
  const id = createHash("sha256")
    .update("cairn-audit-key-id/1\n")
    .update(key)
    .digest("hex")
    .slice(0, 16);
  return { id, key };
}

/** A key as CAIRN_AUDIT_KEY gives it. */
export function auditKeyFromSecret(secret: string): AuditKey {
  return keyOf(Buffer.from(secret, "utf8"));
}

/** The key derived from an AUTH_SECRET, when CAIRN_AUDIT_KEY is unset. */
export function auditKeyFromAuthSecret(authSecret: string): AuditKey {
  return keyOf(createHmac("sha256", authSecret).update(DERIVED_KEY_LABEL).digest());
}

/** An entry of CAIRN_AUDIT_PREVIOUS_KEYS: a former CAIRN_AUDIT_KEY, or `auth-secret:` and a former AUTH_SECRET. */
export function previousAuditKey(entry: string): AuditKey {
  return entry.startsWith(AUTH_SECRET_PREFIX)
    ? auditKeyFromAuthSecret(entry.slice(AUTH_SECRET_PREFIX.length))
    : auditKeyFromSecret(entry);
}

let cached: AuditKeyring | undefined;

/**
 * The keyring of this process, from its environment. The embedded default has
 * no AUTH_SECRET to give: the one Cairn keeps in the data folder is read (or
 * made, as the server would on its first start), so the server and the CLI
 * sign and check with the same key.
 */
export function auditKeyring(): AuditKeyring {
  if (cached) return cached;
  const config = env();
  const current = config.CAIRN_AUDIT_KEY
    ? auditKeyFromSecret(config.CAIRN_AUDIT_KEY)
    : auditKeyFromAuthSecret(process.env.AUTH_SECRET || resolveAuthSecret(config));
  cached = { current, previous: config.CAIRN_AUDIT_PREVIOUS_KEYS.map(previousAuditKey) };
  return cached;
}

function mac(key: AuditKey, head: SignedHead): Buffer {
  return createHmac("sha256", key.key)
    .update(
      `cairn-audit-head/1\n${head.tenantId}\n${head.planId}\n${head.chainLength}\n${head.headDigest}`,
    )
    .digest();
}

export function signHead(
  keyring: AuditKeyring,
  head: SignedHead,
): { keyId: string; signature: string } {
  return { keyId: keyring.current.id, signature: mac(keyring.current, head).toString("hex") };
}

/** Whether a stored signature is one of the keyring's keys' over `head`. */
export function checkHeadSignature(
  keyring: AuditKeyring,
  head: SignedHead,
  signed: { keyId: string; signature: string },
): "valid" | "unknown key" | "invalid" {
  const key = [keyring.current, ...keyring.previous].find((each) => each.id === signed.keyId);
  if (!key) return "unknown key";
  const given = Buffer.from(signed.signature, "hex");
  const expected = mac(key, head);
  return given.length === expected.length && timingSafeEqual(given, expected) ? "valid" : "invalid";
}
