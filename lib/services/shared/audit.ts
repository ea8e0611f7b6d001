/**
 * The audit trail (docs/execution-loop.md): every plan and step
 * mutation writes its rows through `writeAuditLog` inside the same transaction,
 * before commit, so no change exists without its record. Payloads are typed per
 * event type.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { planAuditLog } from "../../db/schema";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import type { PlanStatus } from "../../plan-engine/states";
import type { ServiceContext } from "./context";

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

export async function writeAuditLog(
  tx: Transaction,
  ctx: ServiceContext,
  entries: AuditEntry | AuditEntry[],
): Promise<void> {
  const list = Array.isArray(entries) ? entries : [entries];
  if (list.length === 0) return;
  await tx.insert(planAuditLog).values(list.map((entry) => auditRow(ctx, entry)));
}

/**
 * The same rows as `writeAuditLog`, as an `INSERT` to end a statement that
 * makes the changes they record (the rows travel as one JSON parameter), so a
 * use case can write its changes and their audit rows in one round trip.
 */
export function auditInsert(
  ctx: ServiceContext,
  entries: AuditEntry[],
  only?: { when: SQL; payloadFrom: SQL; stepIdFrom?: SQL },
): SQL {
  const rows = JSON.stringify(entries.map((entry) => auditRow(ctx, entry)));
  // `only`: rows written only when a guard relation has a row, with payload
  // fields (and, where the engine could not know it, the step) that the
  // statement itself reads: a guarded one-statement write.
  return sql`
    insert into plan_audit_log
      (tenant_id, plan_id, step_id, event_type, actor_type, actor_id, actor_label, payload)
    select r."tenantId", r."planId", ${only?.stepIdFrom ?? sql`r."stepId"`}, r."eventType",
      r."actorType", r."actorId", r."actorLabel",
      r.payload${only ? sql` || ${only.payloadFrom}` : sql``}
    from jsonb_to_recordset(${rows}::jsonb) as r("tenantId" uuid, "planId" uuid, "stepId" uuid,
      "eventType" audit_event_type, "actorType" actor_type, "actorId" uuid, "actorLabel" text,
      payload jsonb)${only ? sql` where exists (${only.when})` : sql``}`;
}

/**
 * The `step_started` row (payload as in `AuditEntry`) of a step handed out
 * inside a single statement, as an `INSERT ... SELECT` from that statement's
 * `claimed` relation (columns `id`, `plan_id`, `step_order`, `attempt`,
 * `reissued`): get_next_step's one-round-trip path, where the step's id is not
 * known before the statement runs.
 */
export function stepStartedAuditInsert(
  ctx: ServiceContext,
  planStatusBefore: PlanStatus,
  claimed: SQL,
): SQL {
  const eventType: AuditEntry["eventType"] = "step_started";
  return sql`
    insert into plan_audit_log
      (tenant_id, plan_id, step_id, event_type, actor_type, actor_id, actor_label, payload)
    select ${ctx.tenantId}::uuid, claimed.plan_id, claimed.id, ${eventType}::audit_event_type,
      ${ctx.actor.type}::actor_type, ${ctx.actor.id}::uuid, ${ctx.actor.label}::text,
      jsonb_strip_nulls(jsonb_build_object('stepOrder', claimed.step_order,
        'planStatusBefore', ${planStatusBefore}::text, 'attempt', claimed.attempt,
        'reissued', claimed.reissued))
    from ${claimed} as claimed`;
}
