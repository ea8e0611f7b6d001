/**
 * Signing the heads of audit chains (docs/audit.md, "Signed heads"). Cairn
 * signs a plan's head in the transaction of every review decision, and the
 * scheduler's passes sign the heads of trails that grew since their last
 * signature (or whose signature is by a key rotated out), a bounded number
 * per pass. Neither signs over what it cannot vouch for: a signed head whose
 * row no longer carries the digest signed, a signature that does not verify,
 * or a decision after the signed head that no signature covers (Cairn signs
 * each decision in its transaction, so such a row was written outside Cairn)
 * leaves the signature where it is, for the checks to report.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import { logWarning } from "../../log";
import { DECISION_ROW } from "./audit-chain";
import { type AuditKeyring, auditKeyring, signHead } from "./audit-key";
import { type StoredSignature, signedHeadFailure, unsignedDecisionFailure } from "./chain-verifier";

const signingState = z.object({
  tenantId: z.string(),
  chainLength: z.number(),
  lastDigest: z.string(),
  signedTenantId: z.string().nullable(),
  signedLength: z.number().nullable(),
  signedDigest: z.string().nullable(),
  keyId: z.string().nullable(),
  signature: z.string().nullable(),
  digestAtSigned: z.string().nullable(),
  /** The decisions after the signed head, the first of them, and its id. */
  tailDecisions: z.number(),
  firstTailDecision: z.number().nullable(),
  firstTailDecisionId: z.string().nullable(),
});
type SigningState = z.infer<typeof signingState>;

/**
 * The plan's head and signed head, and the decisions after the signed head:
 * one statement, over the rows after it only (the chain's index), so its cost
 * is the rows written since the last signature, not the trail's length.
 */
async function readSigningState(db: Executor, planId: string): Promise<SigningState | undefined> {
  const [row] = await selectRows(
    db,
    signingState,
    sql`select h.tenant_id as "tenantId", h.chain_length as "chainLength",
        h.last_digest as "lastDigest", s.tenant_id as "signedTenantId",
        s.chain_length as "signedLength", s.head_digest as "signedDigest", s.key_id as "keyId",
        s.signature,
        (select l.digest from plan_audit_log l
          where l.plan_id = h.plan_id and l.chain_index = s.chain_length) as "digestAtSigned",
        tail.decisions as "tailDecisions", tail.first as "firstTailDecision",
        (select l.id from plan_audit_log l
          where l.plan_id = h.plan_id and l.chain_index = tail.first) as "firstTailDecisionId"
      from plan_audit_head h
      left join plan_audit_signature s on s.plan_id = h.plan_id
      cross join lateral (
        select count(*)::int as decisions, min(l.chain_index) as first
        from plan_audit_log l
        where l.plan_id = h.plan_id and l.chain_index > coalesce(s.chain_length, 0)
          and ${DECISION_ROW}
      ) tail
      where h.plan_id = ${planId}::uuid`,
  );
  return row;
}

function storedOf(state: SigningState): StoredSignature | null {
  return state.signedTenantId !== null && state.signedLength !== null && state.signedDigest !== null
    ? {
        tenantId: state.signedTenantId,
        chainLength: state.signedLength,
        headDigest: state.signedDigest,
        keyId: state.keyId,
        signature: state.signature,
      }
    : null;
}

/** Why the head cannot be signed over what is stored, or undefined when it can. */
function refusal(
  planId: string,
  state: SigningState,
  ownDecisions: number,
  keyring: AuditKeyring,
): string | undefined {
  const stored = storedOf(state);
  const failure = stored && signedHeadFailure(planId, stored, state.digestAtSigned, keyring);
  if (failure) return failure;
  if (state.tailDecisions > ownDecisions && state.firstTailDecision !== null) {
    return unsignedDecisionFailure({
      position: state.firstTailDecision,
      id: state.firstTailDecisionId ?? "",
    });
  }
  return undefined;
}

/**
 * Signs the head as read, unless the stored signature changed since: `onlyOver`
 * the signature read (the scheduler, which holds no lock of the plan), or over
 * any shorter one (a decision, whose transaction holds the head's lock, so its
 * head is the newest).
 */
async function storeSignature(
  db: Executor,
  planId: string,
  state: SigningState,
  keyring: AuditKeyring,
  replace: "onlyOver" | "shorter",
): Promise<boolean> {
  const { keyId, signature } = signHead(keyring, {
    tenantId: state.tenantId,
    planId,
    chainLength: state.chainLength,
    headDigest: state.lastDigest,
  });
  const guard =
    replace === "shorter"
      ? sql`plan_audit_signature.chain_length <= excluded.chain_length`
      : sql`plan_audit_signature.chain_length = ${state.signedLength}::int
          and plan_audit_signature.head_digest = ${state.signedDigest}::text
          and plan_audit_signature.key_id is not distinct from ${state.keyId}::text`;
  const written = await selectRows(
    db,
    z.object({ planId: z.string() }),
    sql`insert into plan_audit_signature
        (plan_id, tenant_id, chain_length, head_digest, key_id, signature, signed_at)
      values (${planId}::uuid, ${state.tenantId}::uuid, ${state.chainLength}, ${state.lastDigest},
        ${keyId}, ${signature}, now())
      on conflict (plan_id) do update set tenant_id = excluded.tenant_id,
        chain_length = excluded.chain_length, head_digest = excluded.head_digest,
        key_id = excluded.key_id, signature = excluded.signature, signed_at = excluded.signed_at
      where ${guard}
      returning plan_id as "planId"`,
  );
  return written.length > 0;
}

/**
 * At a review decision, in its transaction, after its rows are chained: signs
 * the plan's head, which now ends with the decision's rows. The decision's
 * transaction holds the plan's row and the head's (its rows moved the head),
 * so this takes no lock out of order. A trail it cannot vouch for is left to
 * the checks, and the decision stands.
 */
export async function signHeadAtDecision(
  tx: Executor,
  planId: string,
  keyring: AuditKeyring = auditKeyring(),
): Promise<void> {
  const state = await readSigningState(tx, planId);
  if (!state) return;
  // The decision's own row is after the signed head: the one decision allowed there.
  const refused = refusal(planId, state, 1, keyring);
  if (refused) {
    logWarning(
      `Cairn: the audit trail of plan ${planId} is not signed at its decision: ${refused}`,
    );
    return;
  }
  await storeSignature(tx, planId, state, keyring, "shorter");
}

export type SigningPass = {
  signed: number;
  /** Plans whose head was not signed, and why (the checks report them as tampered). */
  refused: { planId: string; reason: string }[];
  /** Where the next pass starts: the plans after this one's last, round the list. */
  after: string | null;
};

/** How many heads one pass looks at. */
export const SIGNING_PASS_PLANS = 100;

/**
 * One pass of the scheduler's signing: the heads of up to `limit` plans whose
 * trail grew since its signature, has none, or was signed with a key that is
 * no longer the current one (a rotation re-signs every head, so the previous
 * key can be dropped once the passes are through), taken in plan id order
 * from `after`, so plans whose head is refused do not hold up the others.
 */
export async function signGrownHeads(
  db: Database,
  options: { after?: string | null; limit?: number; keyring?: AuditKeyring } = {},
): Promise<SigningPass> {
  const keyring = options.keyring ?? auditKeyring();
  const limit = options.limit ?? SIGNING_PASS_PLANS;
  const after = options.after ?? null;
  const due = await selectRows(
    db,
    z.object({ planId: z.string() }),
    sql`select h.plan_id as "planId"
      from plan_audit_head h
      join research_plan p on p.id = h.plan_id
      left join plan_audit_signature s on s.plan_id = h.plan_id
      where (s.plan_id is null or s.chain_length < h.chain_length
          or s.key_id is distinct from ${keyring.current.id})
        and (${after}::uuid is null or h.plan_id > ${after}::uuid)
      order by h.plan_id
      limit ${limit}`,
  );
  const pass: SigningPass = { signed: 0, refused: [], after: null };
  for (const { planId } of due) {
    const state = await readSigningState(db, planId);
    if (!state) continue;
    const refused = refusal(planId, state, 0, keyring);
    if (refused) pass.refused.push({ planId, reason: refused });
    else if (await storeSignature(db, planId, state, keyring, "onlyOver")) pass.signed += 1;
  }
  // A short page ends the round: the next pass starts from the first plan.
  pass.after = due.length === limit ? (due.at(-1)?.planId ?? null) : null;
  return pass;
}

/**
 * The scheduler's signing, for its housekeeping (lib/startup.ts): a pass at
 * most every `intervalMs`, each from where the last left off. A refused head
 * is logged once per pass it is looked at; the checks name the row.
 */
export function headSigner(intervalMs: number): (db: Database) => Promise<void> {
  let last = 0;
  let after: string | null = null;
  return async (db) => {
    const now = Date.now();
    if (now - last < intervalMs) return;
    last = now;
    const pass = await signGrownHeads(db, { after });
    after = pass.after;
    for (const { planId, reason } of pass.refused) {
      logWarning(`Cairn: the audit trail of plan ${planId} is not signed: ${reason}`);
    }
  };
}
