/**
 * What a plan's hash chain must satisfy (docs/audit.md), and the verdict on
 * it: each link (its place, its link to the row before, its digest over its
 * content), the trail against its head, and against its signed head (the
 * digest signed still there, the signature verifying with a key of Cairn's
 * environment, no decision after it). `ChainVerifier` checks the rows in Node
 * as they come; the database's own check (`checkPlanTrailInDatabase`,
 * audit-chain.ts) reaches the same verdict.
 */
import "server-only";
import { createHash } from "node:crypto";
import { z } from "zod";
import { type AuditKeyring, auditKeyring, checkHeadSignature } from "./audit-key";

export const chainedRow = z.object({
  id: z.string(),
  chainIndex: z.number().nullable(),
  prevDigest: z.string().nullable(),
  digest: z.string().nullable(),
  canonical: z.string(),
  /** A review decision's row: Cairn signs the head in its transaction. */
  decision: z.boolean(),
});
export type ChainedRow = z.infer<typeof chainedRow>;

/** Where a plan's chain ends, as the trigger last recorded it. */
export type ChainHead = { chainLength: number; lastDigest: string };

/**
 * The plan's newest signed head, as stored; `keyId` and `signature` null on
 * the migration's mark of a trail written before signing began.
 */
export type StoredSignature = {
  tenantId: string;
  chainLength: number;
  headDigest: string;
  keyId: string | null;
  signature: string | null;
};

export type TrailVerification = {
  planId: string;
  rows: number;
  verified: boolean;
  /** The first row whose link does not hold, and why; absent when the rows link. */
  firstBadRow?: { id: string; position: number; reason: string };
  /** Why a trail whose rows link does not end where its head says; absent when it does. */
  headMismatch?: string;
  /** Why the signed head shows the trail was written outside Cairn; absent when it does not. */
  signatureFailure?: string;
  /**
   * Of a trail that verifies: how many rows a signature that verifies covers
   * (the rest are not yet signed), and the key that signed them.
   */
  signedRows?: number;
  keyId?: string;
};

/** Why a link fails, in the order they are checked. */
const REASONS = {
  unplaced: "the row has no place in the chain",
  misplaced: (index: number, position: number) =>
    `the row is link ${index} where link ${position} should be (a row before it is missing)`,
  unlinked: "the row does not link to the digest of the row before it",
  changed: "the row's content does not match its digest (it was changed after it was written)",
};

/** A link's checks, made in Node or by the database; the first that fails, or undefined. */
export function linkFailure(link: {
  chainIndex: number | null;
  position: number;
  linked: boolean;
  sealed: boolean;
}): string | undefined {
  if (link.chainIndex !== link.position) {
    return link.chainIndex === null
      ? REASONS.unplaced
      : REASONS.misplaced(link.chainIndex, link.position);
  }
  if (!link.linked) return REASONS.unlinked;
  if (!link.sealed) return REASONS.changed;
  return undefined;
}

/**
 * Whether a trail whose rows all link ends where its head says: `rows` links,
 * the last with `lastDigest`. Rows deleted from its end, a plan deleted with
 * its trail, a head deleted or a trail rewritten each fail here.
 */
function headFailure(
  rows: number,
  lastDigest: string | null,
  head: ChainHead | null,
  planExists: boolean,
): string | undefined {
  if (!head) {
    return rows === 0
      ? undefined
      : "the trail has no head: the record of its length and last digest was deleted";
  }
  if (!planExists) {
    return `the plan was deleted, and with it its trail of ${head.chainLength} rows`;
  }
  if (rows < head.chainLength) {
    const missing =
      rows + 1 === head.chainLength
        ? `row ${head.chainLength} is missing`
        : `rows ${rows + 1} to ${head.chainLength} are missing`;
    return `${missing}: the trail ends at row ${rows} but its head records ${head.chainLength} (its newest rows were deleted)`;
  }
  if (rows > head.chainLength) {
    return `the trail has ${rows} rows but its head records ${head.chainLength} (rows were added outside the chain)`;
  }
  if (lastDigest !== head.lastDigest) {
    return `row ${rows} is not the last row its head records (the trail was rewritten)`;
  }
  return undefined;
}

/** What a check saw of the signed head while it read the rows. */
export type SignatureEvidence = {
  stored: StoredSignature | null;
  /** The digest of the row the signature names (row `stored.chainLength`); null when there is none. */
  digestAtSigned: string | null;
  /** The first decision row after the signed head (after the mark, or anywhere when there is neither). */
  tailDecision?: { id: string; position: number };
};

/**
 * Whether a stored head still holds: its row carries the digest signed, and
 * its signature (a mark has none) is one of the keyring's over it. The signer
 * checks this before it moves a signature on, so it never signs over a rewrite.
 */
export function signedHeadFailure(
  planId: string,
  stored: StoredSignature,
  digestAtSigned: string | null,
  keyring: AuditKeyring,
): string | undefined {
  const at = stored.chainLength;
  if (digestAtSigned === null) {
    return `the head signed at row ${at} is gone: the trail has no row ${at} (signed rows were deleted)`;
  }
  if (digestAtSigned !== stored.headDigest) {
    return `row ${at} is not the row its signature covers (the trail was rewritten up to its signed head)`;
  }
  if (stored.keyId === null || stored.signature === null) return undefined;
  const checked = checkHeadSignature(
    keyring,
    { tenantId: stored.tenantId, planId, chainLength: at, headDigest: stored.headDigest },
    { keyId: stored.keyId, signature: stored.signature },
  );
  if (checked === "unknown key") {
    return `the head signed at row ${at} names key ${stored.keyId}, which Cairn does not hold (a key rotated out must stay in CAIRN_AUDIT_PREVIOUS_KEYS until every head is signed again)`;
  }
  return checked === "invalid"
    ? `the signature of the head at row ${at} does not verify: it was not made with Cairn's key`
    : undefined;
}

/** Why a decision after the signed head cannot be Cairn's. */
export function unsignedDecisionFailure(decision: { id: string; position: number }): string {
  return `row ${decision.position} (${decision.id}) is a decision after the last signed head: Cairn signs the head in every decision's transaction, so it was written outside Cairn`;
}

/**
 * The verdict of either check (row by row here, or by the database): the
 * first row that fails its link, else the trail against its head, else
 * against its signed head.
 */
export function verdict(
  planId: string,
  rows: number,
  firstBadRow: TrailVerification["firstBadRow"],
  head: { head: ChainHead | null; lastDigest: string | null; planExists: boolean },
  signed: SignatureEvidence,
  keyring: AuditKeyring,
): TrailVerification {
  if (firstBadRow) return { planId, rows, verified: false, firstBadRow };
  const headMismatch = headFailure(rows, head.lastDigest, head.head, head.planExists);
  if (headMismatch) return { planId, rows, verified: false, headMismatch };
  const { stored } = signed;
  const signatureFailure =
    (stored && signedHeadFailure(planId, stored, signed.digestAtSigned, keyring)) ??
    (signed.tailDecision && unsignedDecisionFailure(signed.tailDecision));
  if (signatureFailure) return { planId, rows, verified: false, signatureFailure };
  return stored?.keyId
    ? { planId, rows, verified: true, signedRows: stored.chainLength, keyId: stored.keyId }
    : { planId, rows, verified: true, signedRows: 0 };
}

/** What a failed check says, for the CLI and the plan page; undefined when the trail verifies. */
export function trailFailure(result: TrailVerification): string | undefined {
  const bad = result.firstBadRow;
  return bad
    ? `row ${bad.position} (${bad.id}): ${bad.reason}`
    : (result.headMismatch ?? result.signatureFailure);
}

/**
 * How much of a trail that verifies is signed, for the CLI and the plan page.
 * Rows not signed yet are not a failure: Cairn signs them at the plan's next
 * decision or its next signing pass.
 */
export function trailSigning(result: TrailVerification): string {
  const signed = result.signedRows ?? 0;
  const key = `with key ${result.keyId}`;
  if (signed === result.rows) return result.rows === 0 ? "no rows" : `all signed ${key}`;
  if (signed === 0) return "not signed yet";
  const rest =
    signed + 1 === result.rows ? `row ${result.rows}` : `rows ${signed + 1} to ${result.rows}`;
  return `rows 1 to ${signed} signed ${key}, ${rest} not signed yet`;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Checks a plan's rows link by link as they come, in chain order (the export streams them). */
export class ChainVerifier {
  private count = 0;
  private previous: string | null = null;
  private firstBadRow?: TrailVerification["firstBadRow"];
  private digestAtSigned: string | null = null;
  private tailDecision?: { id: string; position: number };

  constructor(
    private readonly planId: string,
    private readonly signature: StoredSignature | null,
    private readonly keyring: AuditKeyring = auditKeyring(),
  ) {}

  add(row: ChainedRow): void {
    this.count += 1;
    if (this.firstBadRow) return;
    const signedLength = this.signature?.chainLength ?? 0;
    if (this.count === signedLength) this.digestAtSigned = row.digest;
    if (row.decision && this.count > signedLength && !this.tailDecision) {
      this.tailDecision = { id: row.id, position: this.count };
    }
    const reason = linkFailure({
      chainIndex: row.chainIndex,
      position: this.count,
      linked: row.prevDigest === this.previous,
      sealed: row.digest === sha256Hex(`${this.previous ?? ""}${row.canonical}`),
    });
    if (reason) this.firstBadRow = { id: row.id, position: this.count, reason };
    else this.previous = row.digest;
  }

  /** The verdict on the rows added, against the plan's head and its signed head. */
  result(head: ChainHead | null, planExists = true): TrailVerification {
    return verdict(
      this.planId,
      this.count,
      this.firstBadRow,
      { head, lastDigest: this.previous, planExists },
      {
        stored: this.signature,
        digestAtSigned: this.digestAtSigned,
        tailDecision: this.tailDecision,
      },
      this.keyring,
    );
  }
}
