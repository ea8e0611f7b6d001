/**
 * A plan's audit trail as JSON, with its hash chain and head, for an auditor
 * to check without Cairn: each row's fields as its canonical text holds them
 * (what its digest covers, to the microsecond), the canonical text, its digest
 * and the digest of the row before it. docs/audit.md says how to check.
 *
 * The trail is streamed: read a page at a time (a keyset on `chain_index`) and
 * written out as it is read, so a long trail is never held in memory. It
 * holds the trail up to the head read when the export began: rows a writer
 * chains meanwhile are left for the next export.
 */
import "server-only";
import type { ServiceContext } from "../shared/context";
import { getPlan } from "../shared/plan-access";
import { chainPages, loadHead } from "./audit-chain";
import {
  type ChainedRow,
  type ChainHead,
  ChainVerifier,
  type StoredSignature,
} from "./chain-verifier";

export const AUDIT_EXPORT_FORMAT = "cairn-audit-trail/2";

/** The fields of `audit_row_canonical`'s array, in its order (drizzle/0029_audit_head_one_update.sql, the two-argument form; first in drizzle/0007_checkpoints.sql). */
export const CANONICAL_FIELDS = [
  "chainIndex",
  "tenantId",
  "planId",
  "stepId",
  "eventType",
  "actorType",
  "actorId",
  "actorLabel",
  "createdAt",
  "payload",
] as const;

const ALGORITHM = `digest = hex(sha256(utf8((prevDigest ?? '') + canonical))); rows in chainIndex order, each prevDigest equal to the digest before it (null for the first); the last row is head.chainLength and its digest head.lastDigest. canonical is a JSON array: [${CANONICAL_FIELDS.join(", ")}], createdAt in UTC with microseconds; each row shows those fields by name, as canonical holds them.`;

export type AuditExport = { planId: string; body: ReadableStream<Uint8Array> };

/** The plan's trail as a stream of JSON (`AUDIT_EXPORT_FORMAT`); NOT_FOUND for a plan not in the tenant. */
export async function exportAuditTrail(ctx: ServiceContext, planId: string): Promise<AuditExport> {
  const plan = await getPlan(ctx.db, ctx, planId);
  const { head, signature } = await loadHead(ctx.db, plan.id, ctx.tenantId);
  const chunks = exportChunks(ctx, { id: plan.id, name: plan.name }, head, signature);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return { planId: plan.id, body };
}

/** The export's text: its header, then each page of rows as it is read, then the verdict. */
async function* exportChunks(
  ctx: ServiceContext,
  plan: { id: string; name: string },
  head: ChainHead | null,
  signature: StoredSignature | null,
): AsyncGenerator<string> {
  const header = JSON.stringify(
    {
      format: AUDIT_EXPORT_FORMAT,
      planId: plan.id,
      planName: plan.name,
      exportedAt: new Date().toISOString(),
      algorithm: ALGORITHM,
      head,
    },
    null,
    2,
  );
  // The header's object left open (its closing "\n}" cut) for the rows that follow.
  yield `${header.slice(0, -2)},\n  "rows": [`;
  // Cairn's verdict includes its signed head, which an auditor without the key cannot check.
  const verifier = new ChainVerifier(plan.id, signature);
  let separator = "\n    ";
  for await (const page of chainPages(ctx.db, plan.id, ctx.tenantId, head?.chainLength ?? null)) {
    let text = "";
    for (const link of page) {
      verifier.add(link);
      text += `${separator}${JSON.stringify(exportedRow(link))}`;
      separator = ",\n    ";
    }
    yield text;
  }
  yield `\n  ],\n  "verification": ${JSON.stringify(verifier.result(head))}\n}\n`;
}

/** A row as exported: its fields taken from its canonical text, so they are what its digest covers. */
function exportedRow(link: ChainedRow) {
  const values: unknown[] = JSON.parse(link.canonical);
  return {
    id: link.id,
    ...Object.fromEntries(CANONICAL_FIELDS.map((field, index) => [field, values[index]])),
    canonical: link.canonical,
    prevDigest: link.prevDigest,
    digest: link.digest,
  };
}
