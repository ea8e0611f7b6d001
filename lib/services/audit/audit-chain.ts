/**
 * The audit trail's hash chain (docs/audit.md). Each plan's rows are chained
 * by the database trigger `plan_audit_chain` (drizzle/0007_checkpoints.sql):
 * row n carries `prev_digest` (row n-1's digest) and `digest` =
 * sha256(prev_digest || canonical), where canonical is the row's content as
 * `audit_row_canonical` writes it. Verification recomputes every digest here,
 * in Node, from the canonical text the database gives, so a row edited in
 * place, deleted or re-ordered is named by the first link that no longer
 * holds. The export carries the same canonical texts and digests, so an
 * auditor can check a trail without Cairn. The plan page, read every few
 * seconds, has the database do the same check (`checkPlanTrailInDatabase`)
 * and send back only the first row that fails, not the whole trail.
 */
import "server-only";
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { selectRows } from "../../db/rows";

export type ChainedRow = {
  id: string;
  chainIndex: number | null;
  prevDigest: string | null;
  digest: string | null;
  canonical: string;
};

export type TrailVerification = {
  planId: string;
  rows: number;
  verified: boolean;
  /** The first row whose link does not hold, and why; absent when the trail verifies. */
  firstBadRow?: { id: string; position: number; reason: string };
};

/** Why a link fails, in the order they are checked. */
const REASONS = {
  unplaced: "the row has no place in the chain",
  misplaced: (index: number, position: number) =>
    `the row is link ${index} where link ${position} should be (a row before it is missing)`,
  unlinked: "the row does not link to the digest of the row before it",
  changed: "the row's content does not match its digest (it was changed after it was written)",
};

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Checks a plan's rows, in chain order, link by link. */
export function verifyChain(planId: string, rows: readonly ChainedRow[]): TrailVerification {
  let previous: string | null = null;
  for (const [index, row] of rows.entries()) {
    const position = index + 1;
    const bad = (reason: string): TrailVerification => ({
      planId,
      rows: rows.length,
      verified: false,
      firstBadRow: { id: row.id, position, reason },
    });
    if (row.chainIndex !== position) {
      return bad(
        row.chainIndex === null ? REASONS.unplaced : REASONS.misplaced(row.chainIndex, position),
      );
    }
    if (row.prevDigest !== previous) {
      return bad(REASONS.unlinked);
    }
    if (row.digest !== sha256Hex(`${previous ?? ""}${row.canonical}`)) {
      return bad(REASONS.changed);
    }
    previous = row.digest;
  }
  return { planId, rows: rows.length, verified: true };
}

/** A plan's chained rows, in chain order, with the canonical text their digests cover. */
export function loadChain(db: Executor, planId: string, tenantId?: string): Promise<ChainedRow[]> {
  return selectRows<ChainedRow>(
    db,
    sql`select l.id, l.chain_index as "chainIndex", l.prev_digest as "prevDigest",
        l.digest, audit_row_canonical(l) as canonical
      from plan_audit_log l
      where l.plan_id = ${planId}::uuid
        and (${tenantId ?? null}::uuid is null or l.tenant_id = ${tenantId ?? null}::uuid)
      order by l.chain_index nulls last, l.seq`,
  );
}

export async function verifyPlanTrail(
  db: Executor,
  planId: string,
  tenantId?: string,
): Promise<TrailVerification> {
  return verifyChain(planId, await loadChain(db, planId, tenantId));
}

/** Every plan's trail (the CLI's `verify-audit` without a plan). */
export async function verifyAllTrails(db: Executor): Promise<TrailVerification[]> {
  const plans = await selectRows<{ id: string }>(
    db,
    sql`select id from research_plan order by created_at, id`,
  );
  const results: TrailVerification[] = [];
  for (const plan of plans) results.push(await verifyPlanTrail(db, plan.id));
  return results;
}

/**
 * The same check as `verifyChain`, run by the database: every link of the
 * plan's trail recomputed there, and only the count and the first row that
 * fails sent back. One pass over the trail in chain order: a row's flags are
 * computed beside its window, and the first failing row (or, when none fails,
 * the first row) is the top of a one-row sort, so the trail is neither kept in
 * a CTE (spilled to disk at 10,000 rows) nor read twice.
 */
export async function checkPlanTrailInDatabase(
  db: Executor,
  planId: string,
  tenantId: string,
): Promise<TrailVerification> {
  const [row] = await selectRows<{
    rows: number;
    id: string;
    position: number;
    chainIndex: number | null;
    linked: boolean;
    sealed: boolean;
  }>(
    db,
    sql`select count(*) over ()::int as rows, id, position::int as position,
        chain_index as "chainIndex", linked, sealed
      from (
        select l.id, l.chain_index,
          row_number() over w as position,
          l.prev_digest is not distinct from lag(l.digest) over w as linked,
          l.digest is not distinct from encode(sha256(convert_to(
            coalesce(l.prev_digest, '') || audit_row_canonical(l), 'UTF8')), 'hex') as sealed
        from plan_audit_log l
        where l.plan_id = ${planId}::uuid and l.tenant_id = ${tenantId}::uuid
        window w as (order by l.chain_index nulls last, l.seq)
      ) links
      order by (chain_index is distinct from position or not linked or not sealed) desc, position
      limit 1`,
  );
  if (!row) return { planId, rows: 0, verified: true };
  const { rows, id, position, chainIndex } = row;
  const reason =
    chainIndex !== position
      ? chainIndex === null
        ? REASONS.unplaced
        : REASONS.misplaced(chainIndex, position)
      : !row.linked
        ? REASONS.unlinked
        : !row.sealed
          ? REASONS.changed
          : undefined;
  if (!reason) return { planId, rows, verified: true };
  return { planId, rows, verified: false, firstBadRow: { id, position, reason } };
}
