/**
 * The audit trail's hash chain (docs/audit.md). Each plan's rows are chained
 * by the database trigger `plan_audit_chain`
 * (drizzle/0032_audit_rows_held_by_their_plan.sql): row n carries
 * `prev_digest` (row n-1's digest) and `digest` = sha256(prev_digest ||
 * canonical), where canonical is the row's content as `audit_row_canonical`
 * writes it; and the plan's head (`plan_audit_head`)
 * records the chain's length and last digest. Verification recomputes every
 * digest here, in Node, from the canonical text the database gives, so a row
 * edited in place, deleted or re-ordered is named by the first link that no
 * longer holds, and the trail must end where its head says, so deleted newest
 * rows (or a deleted plan) show too. The export carries the same canonical
 * texts, digests and head, so an auditor can check a trail without Cairn. The
 * plan page, read every few seconds, has the database do the same check
 * (`checkPlanTrailInDatabase`) and send back only the first row that fails.
 * Then the signed head (`plan_audit_signature`, lib/services/audit/sign-heads.ts):
 * its row must still carry the digest signed, its signature must verify with
 * a key of Cairn's environment, and no decision may follow it, since Cairn
 * signs every decision in its transaction; the rows after it are reported as
 * not yet signed.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Executor } from "../../db/client";
import { selectRows } from "../../db/rows";
import { type AuditKeyring, auditKeyring } from "./audit-key";
import {
  type ChainedRow,
  type ChainHead,
  ChainVerifier,
  chainedRow,
  linkFailure,
  type StoredSignature,
  type TrailVerification,
  verdict,
} from "./chain-verifier";

/** The head in a row read with a left join: null when the plan has none. */
function headOf(row?: { chainLength: number | null; lastDigest: string | null }): ChainHead | null {
  return row?.chainLength != null && row.lastDigest != null
    ? { chainLength: row.chainLength, lastDigest: row.lastDigest }
    : null;
}

/** The signed head in a row read with a left join: null when the plan has none. */
const signatureColumns = {
  signedTenantId: z.string().nullable(),
  signedLength: z.number().nullable(),
  signedDigest: z.string().nullable(),
  keyId: z.string().nullable(),
  signature: z.string().nullable(),
};
const SIGNATURE_SELECT = sql`s.tenant_id as "signedTenantId", s.chain_length as "signedLength",
  s.head_digest as "signedDigest", s.key_id as "keyId", s.signature`;

function signatureOf(row?: {
  signedTenantId: string | null;
  signedLength: number | null;
  signedDigest: string | null;
  keyId: string | null;
  signature: string | null;
}): StoredSignature | null {
  return row?.signedTenantId != null && row.signedLength != null && row.signedDigest != null
    ? {
        tenantId: row.signedTenantId,
        chainLength: row.signedLength,
        headDigest: row.signedDigest,
        keyId: row.keyId,
        signature: row.signature,
      }
    : null;
}

/** A plan's head and signed head, and whether the plan is still there (in the tenant, when given). */
export async function loadHead(
  db: Executor,
  planId: string,
  tenantId?: string,
): Promise<{ head: ChainHead | null; planExists: boolean; signature: StoredSignature | null }> {
  const tenant = tenantId ?? null;
  const [row] = await selectRows(
    db,
    z.object({
      planExists: z.boolean(),
      chainLength: z.number().nullable(),
      lastDigest: z.string().nullable(),
      ...signatureColumns,
    }),
    sql`select exists (select 1 from research_plan p where p.id = ${planId}::uuid
          and (${tenant}::uuid is null or p.tenant_id = ${tenant}::uuid)) as "planExists",
        h.chain_length as "chainLength", h.last_digest as "lastDigest", ${SIGNATURE_SELECT}
      from (select 1) one
      left join plan_audit_head h on h.plan_id = ${planId}::uuid
        and (${tenant}::uuid is null or h.tenant_id = ${tenant}::uuid)
      left join plan_audit_signature s on s.plan_id = ${planId}::uuid
        and (${tenant}::uuid is null or s.tenant_id = ${tenant}::uuid)`,
  );
  return { head: headOf(row), planExists: row?.planExists ?? false, signature: signatureOf(row) };
}

/** A review decision's row, whose head Cairn signs in the decision's transaction. */
export const DECISION_ROW = sql`(l.event_type = 'user_reviewed' and l.payload->>'action' = 'decision')`;

/** How many rows one read of a trail takes. */
export const CHAIN_PAGE_ROWS = 500;

/** The bounds of an int column: keyset reads start and end at constants, not at nulls, so the index serves them. */
const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

/**
 * A plan's rows in chain order, a page at a time: its chained rows by
 * `chain_index` (up to `upTo`, when given; from the lowest, so a row moved to
 * place 0 or below is read too), then any without a place in the chain by
 * `seq`. Each page is one keyset read, so a long trail is never held whole.
 */
export async function* chainPages(
  db: Executor,
  planId: string,
  tenantId: string | undefined,
  upTo: number | null,
): AsyncGenerator<ChainedRow[]> {
  const tenant = tenantId ?? null;
  const reads = [
    {
      key: sql`l.chain_index`,
      where: sql`l.chain_index <= ${upTo ?? INT_MAX}`,
      next: (row: PagedRow) => row.chainIndex ?? INT_MIN,
    },
    { key: sql`l.seq`, where: sql`l.chain_index is null`, next: (row: PagedRow) => row.seq },
  ];
  for (const read of reads) {
    let after = INT_MIN;
    for (;;) {
      const page = await selectRows(
        db,
        pagedRow,
        sql`select l.id, l.chain_index as "chainIndex", l.prev_digest as "prevDigest",
            l.digest, audit_row_canonical(l) as canonical, ${DECISION_ROW} as decision,
            l.seq::float8 as seq
          from plan_audit_log l
          where l.plan_id = ${planId}::uuid
            and (${tenant}::uuid is null or l.tenant_id = ${tenant}::uuid)
            and ${read.where} and ${read.key} > ${after}
          order by ${read.key} limit ${CHAIN_PAGE_ROWS}`,
      );
      if (page.length > 0) yield page.map(withoutSeq);
      const last = page.at(-1);
      if (!last || page.length < CHAIN_PAGE_ROWS) break;
      after = read.next(last);
    }
  }
}

const pagedRow = chainedRow.extend({ seq: z.number() });
type PagedRow = z.infer<typeof pagedRow>;

function withoutSeq({ seq: _, ...row }: PagedRow): ChainedRow {
  return row;
}

/**
 * Checks a plan's trail in Node: its rows and head read in one snapshot (a
 * read-only repeatable-read transaction), so a writer chaining meanwhile does
 * not make the rows and the head disagree.
 */
export function verifyPlanTrail(
  db: Database,
  planId: string,
  tenantId?: string,
  keyring: AuditKeyring = auditKeyring(),
): Promise<TrailVerification> {
  return db.transaction(
    async (tx) => {
      const { head, planExists, signature } = await loadHead(tx, planId, tenantId);
      const verifier = new ChainVerifier(planId, signature, keyring);
      for await (const page of chainPages(tx, planId, tenantId, null)) {
        for (const row of page) verifier.add(row);
      }
      return verifier.result(head, planExists);
    },
    { isolationLevel: "repeatable read", accessMode: "read only" },
  );
}

/**
 * Every plan's trail (the CLI's `verify-audit` without a plan), and the
 * trail of every plan that is gone but whose head remains.
 */
export async function verifyAllTrails(
  db: Database,
  keyring: AuditKeyring = auditKeyring(),
): Promise<TrailVerification[]> {
  const plans = await selectRows(
    db,
    z.object({ id: z.string() }),
    sql`select id from (
        select id, created_at from research_plan
        union all
        select h.plan_id, null from plan_audit_head h
        where not exists (select 1 from research_plan p where p.id = h.plan_id)
      ) plans
      order by created_at nulls last, id`,
  );
  const results: TrailVerification[] = [];
  for (const plan of plans) results.push(await verifyPlanTrail(db, plan.id, undefined, keyring));
  return results;
}

/**
 * The same check as `verifyPlanTrail`, run by the database: every link of the
 * plan's trail recomputed there, and only the count, the first row that fails
 * (or, when none fails, the last row) and the head sent back. One pass over
 * the trail in chain order: a row's flags are computed beside its window, and
 * the row sent back is the top of a one-row sort, so the trail is neither kept
 * in a CTE (spilled to disk at 10,000 rows) nor read twice.
 */
const trailCheckRow = z
  .object({
    chainLength: z.number().nullable(),
    lastDigest: z.string().nullable(),
    ...signatureColumns,
  })
  .and(
    z.union([
      z.object({
        rows: z.number(),
        id: z.string(),
        position: z.number(),
        chainIndex: z.number().nullable(),
        linked: z.boolean(),
        sealed: z.boolean(),
        digest: z.string().nullable(),
        digestAtSigned: z.string().nullable(),
        /** The first decision after the signed head: its position, zero-padded, then its id. */
        tailDecision: z.string().nullable(),
      }),
      // A plan without rows: the left join's columns are all null.
      z.object({ rows: z.null(), id: z.null(), digest: z.null() }),
    ]),
  );

/** Digits of the zero-padded position that leads `tailDecision`, so its minimum is the first. */
const POSITION_DIGITS = 10;

export async function checkPlanTrailInDatabase(
  db: Executor,
  planId: string,
  tenantId: string,
  keyring: AuditKeyring = auditKeyring(),
): Promise<TrailVerification> {
  const [row] = await selectRows(
    db,
    trailCheckRow,
    sql`select h.chain_length as "chainLength", h.last_digest as "lastDigest", ${SIGNATURE_SELECT},
        t.*
      from (select 1) one
      left join plan_audit_head h on h.plan_id = ${planId}::uuid and h.tenant_id = ${tenantId}::uuid
      left join plan_audit_signature s on s.plan_id = ${planId}::uuid
        and s.tenant_id = ${tenantId}::uuid
      left join lateral (
        select count(*) over ()::int as rows, id, position::int as position,
          chain_index as "chainIndex", linked, sealed, digest,
          max(digest) filter (where position = s.chain_length) over () as "digestAtSigned",
          min(lpad(position::text, ${POSITION_DIGITS}, '0') || id::text)
            filter (where decision and position > coalesce(s.chain_length, 0)) over ()
            as "tailDecision"
        from (
          select links.*, (chain_index is distinct from position or not linked or not sealed) as bad
          from (
            select l.id, l.chain_index, l.digest, ${DECISION_ROW} as decision,
              row_number() over w as position,
              l.prev_digest is not distinct from lag(l.digest) over w as linked,
              l.digest is not distinct from encode(sha256(convert_to(
                coalesce(l.prev_digest, '') || audit_row_canonical(l), 'UTF8')), 'hex') as sealed
            from plan_audit_log l
            where l.plan_id = ${planId}::uuid and l.tenant_id = ${tenantId}::uuid
            window w as (order by l.chain_index nulls last, l.seq)
          ) links
        ) flagged
        order by bad desc, case when bad then position else -position end
        limit 1
      ) t on true`,
  );
  const reason = row?.id ? linkFailure(row) : undefined;
  const tail = row?.id ? row.tailDecision : null;
  return verdict(
    planId,
    row?.rows ?? 0,
    row?.id && reason ? { id: row.id, position: row.position, reason } : undefined,
    { head: headOf(row), lastDigest: row?.digest ?? null, planExists: true },
    {
      stored: signatureOf(row),
      digestAtSigned: row?.id ? row.digestAtSigned : null,
      tailDecision: tail
        ? { position: Number(tail.slice(0, POSITION_DIGITS)), id: tail.slice(POSITION_DIGITS) }
        : undefined,
    },
    keyring,
  );
}
