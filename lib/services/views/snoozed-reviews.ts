/**
 * What a reviewer's snoozes hide, and from whom (docs/reviews.md, "Snooze"): a
 * review is snoozed for one person while their snooze has not ended and its
 * time has not come, so it is back in their inbox on time even before the
 * scheduler's return. The inbox list, its count and the Inbox link's count
 * share `snoozedFor`.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { actingUserId, type ServiceContext } from "../shared/context";

/** Whether the review `reviewId` (an SQL expression) is snoozed for the person `userId`. */
export function snoozedFor(reviewId: SQL, userId: string): SQL {
  return sql`exists (select 1 from review_snooze z
    where z.review_request_id = ${reviewId} and z.user_id = ${userId}::uuid
      and z.returned_at is null and z.until > now())`;
}

/** How many pending reviews of the team the acting person has snoozed: the inbox's "Snoozed (n)". */
export async function countSnoozed(ctx: ServiceContext): Promise<number> {
  const [row] = await selectRows(
    ctx.db,
    z.object({ n: z.number() }),
    sql`select count(*)::int as n from review_snooze z
      join review_request r on r.id = z.review_request_id
      where z.tenant_id = ${ctx.tenantId}::uuid and z.user_id = ${actingUserId(ctx)}::uuid
        and z.returned_at is null and z.until > now() and r.status = 'pending'`,
  );
  return row?.n ?? 0;
}

/** When each of these reviews (a page's, at most) comes back for the acting person, if snoozed. */
export async function snoozedUntil(
  ctx: ServiceContext,
  reviewIds: string[],
): Promise<Map<string, string>> {
  if (reviewIds.length === 0) return new Map();
  const rows = await selectRows(
    ctx.db,
    z.object({ reviewRequestId: z.string(), until: z.string() }),
    sql`select z.review_request_id as "reviewRequestId",
        to_char(z.until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as until
      from review_snooze z
      where z.tenant_id = ${ctx.tenantId}::uuid and z.user_id = ${actingUserId(ctx)}::uuid
        and z.review_request_id in (${sql.join(
          reviewIds.map((id) => sql`${id}::uuid`),
          sql`, `,
        )})
        and z.returned_at is null and z.until > now()`,
  );
  return new Map(rows.map((row) => [row.reviewRequestId, row.until]));
}
