/**
 * The reviewer's inbox (docs/reviews.md): the team's pending reviews, oldest
 * first, a page at a time, with their plan and step, the agent's summary and
 * questions, its deadline and who it is assigned to. The page refreshes itself
 * every few seconds, so the summary and the step's instructions come
 * shortened from the database (`Shortened`; the whole of each behind a "Show
 * all" link, full-values.ts), never whole; so does the proposal, field by
 * field in the agent's order (`proposalSql`), shown within a size
 * (`proposalFields`): one read with the plan page's panel and the review card
 * (`reviewShownColumns`). A page holds as many reviews as fit in INBOX_PAGE_BYTES. Filters: assigned to me (the
 * assignee, or anyone holding the assigned role, e.g. every admin for an
 * escalated review, or one of an escalation level's people), one plan, and
 * waiting longer than an age.
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { reviewRequests, type USER_ROLES } from "../../db/schema";
import { DECISION_CHANNELS, REVIEW_DECISIONS } from "../../plan-engine/states";
import { approvalsShown } from "../reviews/approvals";
import { dueWhere } from "../reviews/deadline-actions";
import {
  pendingReviewView,
  reviewShownColumns,
  reviewShownRow,
  shownProposal,
} from "../reviews/review-view";
import { actingUserId, type ServiceContext } from "../shared/context";
import { cursorField, keyset } from "../shared/pagination";
import { snoozedFor } from "./snoozed-reviews";

export const INBOX_AGES = { "1h": 3600, "1d": 86_400, "1w": 604_800 } as const;
export type InboxAge = keyof typeof INBOX_AGES;

/** Reviews on one page of the inbox; the oldest come first, the next page after the last. */
export const INBOX_PAGE_SIZE = 20;
/**
 * The most JSON text of one page's reviews as shown, as the plan page's steps
 * (PLAN_PAGE_STEP_BYTES): a review may show 10 questions of 2,000 characters
 * besides its shortened texts, and HTML and React's payload each carry it. A
 * page shows at least one review.
 */
const INBOX_PAGE_BYTES = 48 * 1024;

export const inboxFilters = z.object({
  mine: z.boolean().default(false),
  planId: z.uuid().optional().catch(undefined),
  age: z
    .enum(Object.keys(INBOX_AGES) as [InboxAge, ...InboxAge[]])
    .optional()
    .catch(undefined),
  /** The reviews the viewer snoozed (docs/reviews.md, "Snooze"), which the inbox otherwise leaves out. */
  snoozed: z.boolean().default(false),
  cursor: cursorField,
});
export type InboxFilters = z.input<typeof inboxFilters>;

/** The filters, and the viewer's role: "mine" includes reviews assigned to it (the viewer is the context's actor). */
export type InboxQuery = InboxFilters & { role: (typeof USER_ROLES)[number] };

/** An inbox entry: the review as the plan page shows it, with its plan and step, and how long it has waited. */
const inboxReview = pendingReviewView
  .omit({ stepOrder: true, lastOpenStep: true, requestedAt: true })
  .extend({
    planName: z.string(),
    stepId: z.string(),
    stepOrder: z.number(),
    stepType: z.string(),
    createdAt: z.string(),
    waitingSeconds: z.number(),
  });
export type InboxReview = z.infer<typeof inboxReview>;

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** A page's row: the review as shown (`reviewShownColumns`), with its plan, step type, age and assignee. */
const inboxRow = reviewShownRow.extend({
  planName: z.string(),
  stepType: z.string(),
  waitingSeconds: z.number(),
  assignedUserLabel: z.string().nullable(),
  positionAt: z.string(),
  positionId: z.string(),
});

/** A team member as the inbox names an assignee: "Name <e-mail>", or the e-mail. */
const memberLabel = (user: string) =>
  sql.raw(`case when ${user}.name is null then ${user}.email
    else ${user}.name || ' <' || ${user}.email || '>' end`);

/** One page of the inbox, the cursor of the next (null on the last), and how many match in all. */
export type InboxPage = { reviews: InboxReview[]; nextCursor: string | null; total: number };

export async function listInbox(ctx: ServiceContext, raw: InboxQuery): Promise<InboxPage> {
  const filters = inboxFilters.parse(raw);
  const userId = actingUserId(ctx);
  const minAge = filters.age ? INBOX_AGES[filters.age] : null;
  // Unaliased: the page's keyset names review_request's columns.
  const matches = sql`review_request.tenant_id = ${ctx.tenantId}::uuid
        and review_request.status = 'pending'
        and ${snoozedFor(sql`review_request.id`, userId)} = ${filters.snoozed}::boolean
        and (not ${filters.mine}::boolean or review_request.assigned_user_id = ${userId}::uuid
          or ${userId}::uuid = any(review_request.assigned_user_ids)
          or review_request.assigned_role = ${raw.role}::user_role)
        and (${filters.planId ?? null}::uuid is null
          or review_request.plan_id = ${filters.planId ?? null}::uuid)
        and (${minAge}::int is null
          or review_request.created_at <= now() - make_interval(secs => ${minAge}::int))
        -- Past its deadline and not yet applied (the inbox applies a few, the scheduler the rest): not decidable here.
        and not exists (select 1 from review_request r
          where r.id = review_request.id and ${dueWhere})`;
  const page = keyset(
    { list: "inbox", at: reviewRequests.createdAt, id: reviewRequests.id, direction: "asc" },
    filters.cursor,
  );
  const [rows, [counted]] = await Promise.all([
    // The page's rows first, by the index; only then, on those rows, what is
    // shown of each (`reviewShownColumns`: its long texts shortened, its digest).
    selectRows(
      ctx.db,
      inboxRow,
      sql`with page as (
        select review_request.id, ${page.position.positionAt} as "positionAt",
          ${page.position.positionId} as "positionId"
        from review_request
        where ${matches} and ${page.where ?? sql`true`}
        order by ${sql.join(page.orderBy, sql`, `)}
        limit ${INBOX_PAGE_SIZE + 1})
      select page."positionAt", page."positionId", ${reviewShownColumns},
        p.name as "planName", step.step_type as "stepType",
        floor(extract(epoch from now() - review.created_at))::int as "waitingSeconds",
        case when u.id is not null then ${memberLabel("u")}
          -- An escalation level's people (at most 10): each by name.
          when review.assigned_user_ids is not null then (select string_agg(${memberLabel("g")}, ', '
            order by array_position(review.assigned_user_ids, g.id))
            from app_user g where g.id = any(review.assigned_user_ids)) end
          as "assignedUserLabel"
      from page
        join review_request review on review.id = page.id
        join research_plan p on p.id = review.plan_id
        join plan_step step on step.id = review.step_id
        left join app_user u on u.id = review.assigned_user_id
      order by review.created_at, review.id`,
    ),
    selectRows(
      ctx.db,
      z.object({ n: z.number() }),
      sql`select count(*)::int as n from review_request where ${matches}`,
    ),
  ]);
  // An escalation level's user ids are read for the label and the filter only:
  // the page names the people (assignedUserLabel), it does not get their ids.
  const shown = rows.map(({ proposalRead, requestedAt, assignedUserIds, ...row }) => ({
    ...row,
    createdAt: requestedAt,
    ...shownProposal(proposalRead),
  }));
  const { items, nextCursor } = page.fitOf(shown, INBOX_PAGE_SIZE, INBOX_PAGE_BYTES, (r) => r);
  // "k of N" for the page's reviews that need several approvals: one more read, of this page only.
  const approvals = await approvalsShown(
    ctx.db,
    ctx.tenantId,
    items.map((review) => review.reviewRequestId),
  );
  return {
    reviews: items.map(
      ({ positionAt, positionId, ...review }): InboxReview => ({
        ...review,
        approvals: approvals.get(review.reviewRequestId) ?? null,
      }),
    ),
    nextCursor,
    total: counted?.n ?? 0,
  };
}

/** The plans that have a pending review, for the inbox's plan filter. */
export async function inboxPlans(ctx: ServiceContext): Promise<{ planId: string; name: string }[]> {
  return selectRows(
    ctx.db,
    z.object({ planId: z.string(), name: z.string() }),
    sql`select distinct p.id as "planId", p.name
      from review_request r join research_plan p on p.id = r.plan_id
      where r.tenant_id = ${ctx.tenantId}::uuid and r.status = 'pending'
      order by p.name`,
  );
}

const recentDecision = z.object({
  reviewRequestId: z.string(),
  planId: z.string(),
  planName: z.string(),
  stepOrder: z.number(),
  decision: z.enum(REVIEW_DECISIONS),
  feedback: z.string().nullable(),
  decidedBy: z.string(),
  channel: z.enum(DECISION_CHANNELS),
  decidedAt: z.string(),
});
export type RecentDecision = z.infer<typeof recentDecision>;

/**
 * The read of the team's `limit` latest decisions: the end of the team's
 * index of them (`review_decision_tenant_idx`), read backward, so the inbox
 * reads those rows, not every team's decisions to sort them.
 */
export const recentDecisionsQuery = (ctx: Pick<ServiceContext, "tenantId">, limit: number) =>
  sql`select d.review_request_id as "reviewRequestId", d.plan_id as "planId",
      p.name as "planName", s.step_order as "stepOrder", d.decision, d.feedback,
      d.decided_by_label as "decidedBy", d.channel, ${iso("d.created_at")} as "decidedAt"
    from review_decision d
      join research_plan p on p.id = d.plan_id
      join plan_step s on s.id = d.step_id
    where d.tenant_id = ${ctx.tenantId}::uuid
    order by d.created_at desc, d.id desc
    limit ${limit}`;

/** The team's latest decisions, with how each was made (a person, an agent relaying, Cairn). */
export async function recentDecisions(ctx: ServiceContext, limit = 10): Promise<RecentDecision[]> {
  return selectRows(ctx.db, recentDecision, recentDecisionsQuery(ctx, limit));
}
