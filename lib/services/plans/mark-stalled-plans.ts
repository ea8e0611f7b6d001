/**
 * Marks stalled plans (docs/state-machines.md, "Stalls"): an `executing` plan
 * with a step whose holder stopped renewing its lease moves to `stalled`, with
 * a `plan_modified/stall_detected` row written as Cairn. The review scheduler
 * every instance runs calls it on each tick (lib/services/reviews/review-scheduler.ts),
 * so the plan page, the inbox counts and the Stalled page agree without anyone
 * reading the plan over MCP; get_plan_status calls it for its one plan so its
 * answer is current. Each plan is claimed `FOR UPDATE SKIP LOCKED` and must
 * still be `executing` under the lock, so with several instances exactly one
 * marks it, once.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { selectRows } from "../../db/rows";
import { type StallClock, stallWarnings } from "../../plan-engine/progress";
import { PLAN_STATUSES } from "../../plan-engine/states";
import { leaseSeconds } from "../loop/leases";
import { writeAuditLog } from "../shared/audit";
import type { Actor, ServiceContext } from "../shared/context";
import { loadStepSummaries, setPlanStatusAndQueueEvent } from "../shared/plan-access";

/** Who marks a plan stalled: Cairn itself, not whoever happened to read the plan. */
export const STALL_ACTOR: Actor = { type: "system", id: null, label: "Cairn" };

type StallSettings = Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds">;

export function stallClock(settings: StallSettings): StallClock {
  return { thresholdSeconds: settings.stallThresholdSeconds, leaseSeconds: leaseSeconds(settings) };
}

/**
 * Whether the plan `planId` (an SQL expression) has a stalled step: the
 * engine's `isStepStalled` as a query, for the lists that filter on it. A lease
 * runs `leaseSeconds` from its renewal, so the renewal is its expiry minus that.
 */
export function hasStalledStep(planId: SQL, settings: StallSettings): SQL {
  const clock = stallClock(settings);
  return sql`exists (select 1 from plan_step s where s.plan_id = ${planId}
    and s.status = 'in_progress'
    and (s.lease_expires_at <= now()
      or coalesce(s.lease_expires_at - make_interval(secs => ${clock.leaseSeconds}), s.updated_at,
        s.started_at) < now() - make_interval(secs => ${clock.thresholdSeconds})))`;
}

/** Marks every stalled plan (of one plan or tenant when scoped); returns how many it marked. */
export async function markStalledPlans(
  db: Database,
  settings: StallSettings,
  scope: { planId?: string; tenantId?: string } = {},
): Promise<number> {
  return db.transaction(async (tx) => {
    const plans = await selectRows(
      tx,
      z.object({ id: z.string(), tenantId: z.string(), status: z.enum(PLAN_STATUSES) }),
      sql`select p.id, p.tenant_id as "tenantId", p.status from research_plan p
        where p.status = 'executing'
          and (${scope.planId ?? null}::uuid is null or p.id = ${scope.planId ?? null}::uuid)
          and (${scope.tenantId ?? null}::uuid is null or p.tenant_id = ${scope.tenantId ?? null}::uuid)
          and ${hasStalledStep(sql`p.id`, settings)}
        order by p.updated_at
        limit 100
        for update of p skip locked`,
    );
    const now = new Date();
    let marked = 0;
    for (const plan of plans) {
      const ctx: ServiceContext = {
        db: tx as unknown as Database,
        tenantId: plan.tenantId,
        actor: STALL_ACTOR,
        ...settings,
      };
      // The engine decides; the query above only finds the candidates.
      const stalled = stallWarnings(
        await loadStepSummaries(tx, ctx, plan.id),
        now,
        stallClock(ctx),
      );
      if (stalled.length === 0) continue;
      await setPlanStatusAndQueueEvent(tx, plan, "stalled", now);
      await writeAuditLog(tx, ctx, {
        eventType: "plan_modified",
        planId: plan.id,
        payload: {
          action: "stall_detected",
          stallThresholdSeconds: settings.stallThresholdSeconds,
          stalledSteps: stalled,
        },
      });
      marked += 1;
    }
    return marked;
  });
}
