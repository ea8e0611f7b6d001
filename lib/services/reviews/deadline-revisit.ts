/**
 * A switch of the team's decision policy revisits its pending deadlines
 * (docs/reviews.md): each action the new policy forbids is replaced by the one
 * in force, decided per group rather than per review.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { ACTOR_TYPES } from "../../db/schema";
import {
  TIMEOUT_ACTIONS,
  type TimeoutAction,
  timeoutActionInForce,
} from "../../plan-engine/review-deadlines";
import type { DECISION_POLICIES } from "../../plan-engine/states";

export type DeadlinesRevisited = {
  /** The team's pending reviews whose deadline is still to run. */
  pending: number;
  /** Each replaced action, with how many reviews it was replaced on. */
  replaced: { from: TimeoutAction; to: TimeoutAction; reviews: number }[];
};

const deadlineGroup = z.object({
  requestedByType: z.enum(ACTOR_TYPES),
  onTimeout: z.enum(TIMEOUT_ACTIONS),
  reviews: z.number(),
});

/**
 * A switch of the team's policy revisits its pending reviews, in the switch's
 * transaction (the team's row locked for update): each deadline whose action
 * the new policy forbids gets the one `timeoutActionInForce` names, its own
 * kept in `on_timeout_replaced`. Decided per (requester kind, action), so a
 * handful of statements whatever the team holds.
 */
export async function revisitPendingDeadlines(
  tx: Transaction,
  tenantId: string,
  team: { decisionPolicy: (typeof DECISION_POLICIES)[number]; teamOnTimeout: TimeoutAction | null },
): Promise<DeadlinesRevisited> {
  const groups = await selectRows(
    tx,
    deadlineGroup,
    sql`select r.requested_by_type as "requestedByType", r.on_timeout as "onTimeout",
        count(*)::int as reviews
      from review_request r
      where r.tenant_id = ${tenantId}::uuid and r.status = 'pending' and r.on_timeout is not null
        and r.escalated_at is null and not r.deadline_from_team
      group by r.requested_by_type, r.on_timeout`,
  );
  const [teamWide] = await selectRows(
    tx,
    z.object({ pending: z.number() }),
    sql`select count(*)::int as pending from review_request r
      where r.tenant_id = ${tenantId}::uuid and r.status = 'pending' and r.on_timeout is not null
        and r.escalated_at is null`,
  );
  const replaced = new Map<string, DeadlinesRevisited["replaced"][number]>();
  for (const group of groups) {
    const inForce = timeoutActionInForce(
      team.decisionPolicy,
      { onTimeout: group.onTimeout, requestedBy: group.requestedByType, fromTeam: false },
      team.teamOnTimeout,
    );
    if (!inForce.replaced) continue;
    await tx.execute(
      sql`update review_request set on_timeout = ${inForce.onTimeout},
          on_timeout_replaced = coalesce(on_timeout_replaced, on_timeout)
        where tenant_id = ${tenantId}::uuid and status = 'pending' and escalated_at is null
          and not deadline_from_team and requested_by_type = ${group.requestedByType}
          and on_timeout = ${group.onTimeout}`,
    );
    const key = `${group.onTimeout}>${inForce.onTimeout}`;
    const entry = replaced.get(key) ?? { from: group.onTimeout, to: inForce.onTimeout, reviews: 0 };
    entry.reviews += group.reviews;
    replaced.set(key, entry);
  }
  return { pending: teamWide?.pending ?? 0, replaced: [...replaced.values()] };
}
