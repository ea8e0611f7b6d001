import { describe, expect, it } from "vitest";
import { ConfigError, parseEnv } from "../../env";
import {
  auditKeyFromAuthSecret,
  auditKeyFromSecret,
  checkHeadSignature,
  previousAuditKey,
  signHead,
} from "./audit-key";

const head = {
  tenantId: "00000000-0000-4000-8000-000000000001",
  planId: "00000000-0000-4000-8000-000000000002",
  chainLength: 7,
  headDigest: "a".repeat(64),
};
const secret = "an-audit-key-an-audit-key-an-audit-key";
const authSecret = "a-session-secret-a-session-secret-0000";

describe("the audit key", () => {
  it("signs a head that verifies with its key, and with it listed as previous after a rotation", () => {
    const key = auditKeyFromSecret(secret);
    const signed = signHead({ current: key, previous: [] }, head);
    expect(signed.keyId).toBe(key.id);
    expect(signed.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(checkHeadSignature({ current: key, previous: [] }, head, signed)).toBe("valid");
    const next = auditKeyFromSecret("the-next-key-the-next-key-the-next-key");
    expect(
      checkHeadSignature({ current: next, previous: [previousAuditKey(secret)] }, head, signed),
    ).toBe("valid");
    expect(checkHeadSignature({ current: next, previous: [] }, head, signed)).toBe("unknown key");
  });

  it("does not verify a signature over another head, or one made with another key under its id", () => {
    const key = auditKeyFromSecret(secret);
    const signed = signHead({ current: key, previous: [] }, head);
    for (const other of [
      { ...head, chainLength: 8 },
      { ...head, headDigest: "b".repeat(64) },
      { ...head, planId: head.tenantId },
      { ...head, tenantId: head.planId },
    ]) {
      expect(checkHeadSignature({ current: key, previous: [] }, other, signed)).toBe("invalid");
    }
    const forged = signHead(
      {
        current: { id: key.id, key: Buffer.from("not-the-key-not-the-key-not-the-key") },
        previous: [],
      },
      head,
    );
    expect(checkHeadSignature({ current: key, previous: [] }, head, forged)).toBe("invalid");
    expect(
      checkHeadSignature({ current: key, previous: [] }, head, { ...signed, signature: "zz" }),
    ).toBe("invalid");
  });

  it("derives a key of its own from AUTH_SECRET, named as previous with auth-secret:", () => {
    const derived = auditKeyFromAuthSecret(authSecret);
    expect(derived.key.equals(Buffer.from(authSecret))).toBe(false);
    expect(derived.id).not.toBe(auditKeyFromSecret(authSecret).id);
    expect(previousAuditKey(`auth-secret:${authSecret}`).id).toBe(derived.id);
  });

  it("refuses a previous key shorter than 32 characters at start-up", () => {
    expect(
      parseEnv({ CAIRN_AUDIT_PREVIOUS_KEYS: ` ${secret} , auth-secret:${authSecret}` })
        .CAIRN_AUDIT_PREVIOUS_KEYS,
    ).toEqual([secret, `auth-secret:${authSecret}`]);
    expect(() => parseEnv({ CAIRN_AUDIT_PREVIOUS_KEYS: `${secret},short` })).toThrow(ConfigError);
    expect(() => parseEnv({ CAIRN_AUDIT_KEY: "short" })).toThrow(/CAIRN_AUDIT_KEY/);
  });
});
