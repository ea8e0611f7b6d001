import { expect } from "vitest";
import { auditKeyring } from "@/lib/services/audit/audit-key";
import type { ChainHead, TrailVerification } from "@/lib/services/audit/chain-verifier";
import { sha256Hex } from "@/lib/services/audit/chain-verifier";
import { CANONICAL_FIELDS, exportAuditTrail } from "@/lib/services/audit/export-audit-trail";
import type { ServiceContext } from "@/lib/services/shared/context";

export type ExportedRow = {
  id: string;
  chainIndex: number | null;
  eventType: string;
  actorLabel: string;
  createdAt: string;
  payload: Record<string, unknown>;
  canonical: string;
  prevDigest: string | null;
  digest: string | null;
} & Record<(typeof CANONICAL_FIELDS)[number], unknown>;

export type ExportedTrail = {
  format: string;
  planId: string;
  head: ChainHead | null;
  rows: ExportedRow[];
  verification: TrailVerification;
};

/** The plan's export (`/plans/<id>/audit`) read to its end and parsed, as a download is. */
export async function readAuditExport(ctx: ServiceContext, planId: string): Promise<ExportedTrail> {
  const exported = await exportAuditTrail(ctx, planId);
  return JSON.parse(await new Response(exported.body).text());
}

/**
 * An auditor's check of an export without Cairn (docs/audit.md): every shown
 * field equals its element of `canonical`, each row links to the digest
 * before it and its digest is sha256(prev + canonical), and the last row is
 * the head; and Cairn's verdict, with `signedRows` of them under its signed head.
 */
export function expectExportChecks(trail: ExportedTrail, signedRows = 0): void {
  let previous: string | null = null;
  for (const [index, row] of trail.rows.entries()) {
    const canonical: unknown[] = JSON.parse(row.canonical);
    expect(canonical).toHaveLength(CANONICAL_FIELDS.length);
    for (const [at, field] of CANONICAL_FIELDS.entries()) {
      expect(row[field], `row ${index + 1}'s ${field}`).toStrictEqual(canonical[at]);
    }
    expect(row.planId).toBe(trail.planId);
    expect(row.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(row.chainIndex).toBe(index + 1);
    expect(row.prevDigest).toBe(previous);
    expect(sha256Hex(`${previous ?? ""}${row.canonical}`)).toBe(row.digest);
    previous = row.digest;
  }
  expect(trail.head).toEqual({ chainLength: trail.rows.length, lastDigest: previous });
  expect(trail.verification).toEqual(verifiedTrail(trail.planId, trail.rows.length, signedRows));
}

/** A trail that verifies, its first `signedRows` rows signed with the tests' key (vitest.config.ts). */
export function verifiedTrail(planId: string, rows: number, signedRows: number): TrailVerification {
  return signedRows > 0
    ? { planId, rows, verified: true, signedRows, keyId: auditKeyring().current.id }
    : { planId, rows, verified: true, signedRows };
}
