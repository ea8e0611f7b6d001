/**
 * The audit trail's hash chain (docs/audit.md). Each plan's rows are chained
 * by the database trigger `plan_audit_chain` (drizzle/0011_audit_head.sql):
 * row n carries `prev_digest` (row n-1's digest) and `digest` =
 * sha256(prev_digest || canonical), where canonical is the row's content as
 * `audit_row_canonical` writes it; and the plan's head (`plan_audit_head`)
 * records the chain's length and last digest. Verification recomputes every
 * digest here, in Node, from the canonical text the database gives, so a row
 * edited in place, deleted or re-ordered is named by the first link that no
 * longer holds, and the trail must end where its head says, so deleted newest
 * rows (or a deleted plan) show too. The export carries the same canonical
 * texts, digests and head, so an auditor can check a trail without Cairn. The
 * plan page, read every few seconds, has the database do the same check
 * (`checkPlanTrailInDatabase`) and send back only the first row that fails.
 */
import "server-only";
import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Executor } from "../../db/client";
import { selectRows } from "../../db/rows";

const chainedRow = z.object({
  id: z.string(),
  chainIndex: z.number().nullable(),
  prevDigest: z.string().nullable(),
  digest: z.string().nullable(),
  canonical: z.string(),
});
export type ChainedRow = z.infer<typeof chainedRow>;

/** Where a plan's chain ends, as the trigger last recorded it. */
export type ChainHead = { chainLength: number; lastDigest: string };

export type TrailVerification = {
  planId: string;
  rows: number;
  verified: boolean;
  /** The first row whose link does not hold, and why; absent when the rows link. */
  firstBadRow?: { id: string; position: number; reason: string };
  /** Why a trail whose rows link does not end where its head says; absent when it does. */
  headMismatch?: string;
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
function linkFailure(link: {
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

/**
 * The verdict of either check (row by row here, or by the database): the
 * first row that fails its link, else the trail against its head.
 */
function verdict(
  planId: string,
  rows: number,
  firstBadRow: TrailVerification["firstBadRow"],
  head: { head: ChainHead | null; lastDigest: string | null; planExists: boolean },
): TrailVerification {
  if (firstBadRow) return { planId, rows, verified: false, firstBadRow };
  const headMismatch = headFailure(rows, head.lastDigest, head.head, head.planExists);
  return headMismatch
    ? { planId, rows, verified: false, headMismatch }
    : { planId, rows, verified: true };
}

/** What a failed check says, for the CLI and the plan page; undefined when the trail verifies. */
export function trailFailure(result: TrailVerification): string | undefined {
  const bad = result.firstBadRow;
  return bad ? `row ${bad.position} (${bad.id}): ${bad.reason}` : result.headMismatch;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Checks a plan's rows link by link as they come, in chain order (the export streams them). */
export class ChainVerifier {
  private count = 0;
  private previous: string | null = null;
  private firstBadRow?: TrailVerification["firstBadRow"];

  constructor(private readonly planId: string) {}

  add(row: ChainedRow): void {
    this.count += 1;
    if (this.firstBadRow) return;
    const reason = linkFailure({
      chainIndex: row.chainIndex,
      position: this.count,
      linked: row.prevDigest === this.previous,
      sealed: row.digest === sha256Hex(`${this.previous ?? ""}${row.canonical}`),
    });
    if (reason) this.firstBadRow = { id: row.id, position: this.count, reason };
    else this.previous = row.digest;
  }

  /** The verdict on the rows added, against the plan's head. */
  result(head: ChainHead | null, planExists = true): TrailVerification {
    return verdict(this.planId, this.count, this.firstBadRow, {
      head,
      lastDigest: this.previous,
      planExists,
    });
  }
}

/** The head in a row read with a left join: null when the plan has none. */
function headOf(row?: { chainLength: number | null; lastDigest: string | null }): ChainHead | null {
  return row?.chainLength != null && row.lastDigest != null
    ? { chainLength: row.chainLength, lastDigest: row.lastDigest }
    : null;
}

/** A plan's head, and whether the plan is still there (in the tenant, when given). */
export async function loadHead(
  db: Executor,
  planId: string,
  tenantId?: string,
): Promise<{ head: ChainHead | null; planExists: boolean }> {
  const tenant = tenantId ?? null;
  const [row] = await selectRows(
    db,
    z.object({
      planExists: z.boolean(),
      chainLength: z.number().nullable(),
      lastDigest: z.string().nullable(),
    }),
    sql`select exists (select 1 from research_plan p where p.id = ${planId}::uuid
          and (${tenant}::uuid is null or p.tenant_id = ${tenant}::uuid)) as "planExists",
        h.chain_length as "chainLength", h.last_digest as "lastDigest"
      from (select 1) one
      left join plan_audit_head h on h.plan_id = ${planId}::uuid
        and (${tenant}::uuid is null or h.tenant_id = ${tenant}::uuid)`,
  );
  const head = headOf(row);
  return { head, planExists: row?.planExists ?? false };
}

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
            l.digest, audit_row_canonical(l) as canonical, l.seq::float8 as seq
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
): Promise<TrailVerification> {
  return db.transaction(
    async (tx) => {
      const { head, planExists } = await loadHead(tx, planId, tenantId);
      const verifier = new ChainVerifier(planId);
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
export async function verifyAllTrails(db: Database): Promise<TrailVerification[]> {
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
  for (const plan of plans) results.push(await verifyPlanTrail(db, plan.id));
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
  .object({ chainLength: z.number().nullable(), lastDigest: z.string().nullable() })
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
      }),
      // A plan without rows: the left join's columns are all null.
      z.object({ rows: z.null(), id: z.null(), digest: z.null() }),
    ]),
  );

export async function checkPlanTrailInDatabase(
  db: Executor,
  planId: string,
  tenantId: string,
): Promise<TrailVerification> {
  const [row] = await selectRows(
    db,
    trailCheckRow,
    sql`select h.chain_length as "chainLength", h.last_digest as "lastDigest", t.*
      from (select 1) one
      left join plan_audit_head h on h.plan_id = ${planId}::uuid and h.tenant_id = ${tenantId}::uuid
      left join lateral (
        select count(*) over ()::int as rows, id, position::int as position,
          chain_index as "chainIndex", linked, sealed, digest
        from (
          select links.*, (chain_index is distinct from position or not linked or not sealed) as bad
          from (
            select l.id, l.chain_index, l.digest,
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
  return verdict(
    planId,
    row?.rows ?? 0,
    row?.id && reason ? { id: row.id, position: row.position, reason } : undefined,
    { head: headOf(row), lastDigest: row?.digest ?? null, planExists: true },
  );
}
