/**
 * The audit trail (docs/execution-loop.md): every plan and step
 * mutation writes its rows through `writeAuditLog` inside the same transaction,
 * before commit, so no change exists without its record, nor a change to a
 * plan's definition without its revision. Payloads are typed per event type.
 */
import "server-only";
import type { Transaction } from "../../db/client";
import { planAuditLog } from "../../db/schema";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import type { ServiceContext } from "./context";
import { recordRevision } from "./revisions";

export type { AuditEntry };

function auditRow(ctx: ServiceContext, entry: AuditEntry) {
  return {
    tenantId: ctx.tenantId,
    planId: entry.planId,
    stepId: "stepId" in entry ? (entry.stepId ?? null) : null,
    eventType: entry.eventType,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    actorLabel: ctx.actor.label,
    payload: entry.payload,
  };
}

/** The rows of `entries` as the loop's fixed statements take them (one JSON parameter). */
export function auditRows(ctx: ServiceContext, entries: AuditEntry[]) {
  return entries.map((entry) => auditRow(ctx, entry));
}

/**
 * The insert of `auditRows` for a fixed statement (SQL text): the rows from
 * the JSON parameter `rows`, each payload as `payload` makes it from the
 * row's (`r.payload`), for facts only the statement learns.
 */
export function auditRowsInsert(rows: string, payload = "r.payload"): string {
  return `insert into plan_audit_log
    (tenant_id, plan_id, step_id, event_type, actor_type, actor_id, actor_label, payload)
  select r."tenantId", r."planId", r."stepId", r."eventType", r."actorType", r."actorId",
    r."actorLabel", ${payload}
  from jsonb_to_recordset(${rows}) as r("tenantId" uuid, "planId" uuid, "stepId" uuid,
    "eventType" audit_event_type, "actorType" actor_type, "actorId" uuid, "actorLabel" text,
    payload jsonb)`;
}

export async function writeAuditLog(
  tx: Transaction,
  ctx: ServiceContext,
  entries: AuditEntry | AuditEntry[],
): Promise<void> {
  const list = Array.isArray(entries) ? entries : [entries];
  if (list.length === 0) return;
  // The chain trigger takes the locks in the loop writers' order, the plan's
  // row and then the trail's head, for every writer (drizzle/0018_hot_path.sql).
  await tx.insert(planAuditLog).values(list.map((entry) => auditRow(ctx, entry)));
  // A change to a plan's definition is also its next revision, after the
  // change's own writes (every caller writes its trail last).
  await recordRevision(tx, ctx, list);
}
