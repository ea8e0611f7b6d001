/**
 * Bulk fork from failure (docs/history-and-forks.md, "Forks from failure"):
 * the team's failed plans that match a filter, a page at a time for the
 * preview, and one action that forks each of them (at most
 * FORK_FAILED_AT_ONCE) from its failed step through fork_plan's own use case,
 * each in its own transaction. A plan already forked from its failed step
 * matches no more, and each fork is made `once`, so the same action sent
 * twice forks each plan once.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { researchPlans } from "../../db/schema";
import { isoTime } from "../../db/statement";
import { isAppError } from "../../plan-engine/app-error";
import { PLAN_STATUSES, STEP_TYPES } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import { cursorField, keyset, type nextCursorField, type PageOrder } from "../shared/pagination";
import { isServerStepTool, SERVER_STEP_TOOL_NAMES } from "../shared/server-step-tools";
import { parseInput } from "../shared/validation";
import { forkPlan } from "./fork-plan";

/** The most plans one action forks: each fork is a transaction, and the admin waits for them all. */
export const FORK_FAILED_AT_ONCE = 100;
/**
 * The most one action copies, by the forked plans' sizes as stored (`planBytes`):
 * each fork reads its source's steps whole and copies its evidence, so an
 * action of large plans stops here, and the same action again goes on.
 */
export const FORK_FAILED_BYTES = 4 * 1024 * 1024;
/** Failed plans a preview page lists. */
export const FAILED_PAGE_SIZE = 20;
/** How much of a failure's reason a row shows. */
const REASON_CHARS = 300;

const day = z.iso.date("must be a date such as 2026-01-31");

/** Which failed plans: by what ran the failed step, by text, by when the plan last changed. */
export const failedPlansFilter = z
  .object({
    tool: z
      .string()
      .refine((tool) => tool === "agent" || isServerStepTool(tool), {
        message: `must be agent (a step the agent ran) or one of ${SERVER_STEP_TOOL_NAMES.join(", ")}`,
      })
      .optional()
      .describe("What ran the failed step: agent, or the Cairn tool of a server-run step."),
    text: z
      .string()
      .trim()
      .max(200)
      .optional()
      .describe("In the plan's name or the failure's reason."),
    since: day.optional().describe("The plan last changed on this day or later."),
    until: day.optional().describe("The plan last changed on this day or earlier."),
  })
  .refine((filter) => !filter.since || !filter.until || filter.since <= filter.until, {
    message: "until must not be before since",
    path: ["until"],
  });

export type FailedPlansFilter = z.input<typeof failedPlansFilter>;

export const failedPlansPageInput = z.object({ filter: failedPlansFilter, cursor: cursorField });

const failedPlanRow = z.object({
  planId: z.string(),
  name: z.string(),
  status: z.enum(PLAN_STATUSES),
  stepId: z.string(),
  stepOrder: z.number(),
  stepType: z.enum(STEP_TYPES),
  tool: z.string().nullable(),
  reason: z.string().nullable(),
  changedAt: isoTime,
  positionAt: z.string(),
  positionId: z.string(),
});

export type FailedPlan = Omit<z.infer<typeof failedPlanRow>, "positionAt" | "positionId">;

export type FailedPlansPage = {
  /** How many plans match, counted up to FORK_FAILED_AT_ONCE. */
  matching: number;
  /** More than FORK_FAILED_AT_ONCE match: an action forks the first of them (newest first). */
  more: boolean;
  plans: FailedPlan[];
  nextCursor: z.infer<typeof nextCursorField>;
};

/** The list's order: the plan's last change, newest first (the preview's pages and the action's choice). */
const FAILED_ORDER: PageOrder = {
  list: "failed plans",
  at: researchPlans.updatedAt,
  id: researchPlans.id,
};

/**
 * The team's failed plans matching `filter`, newest change first, `limit` of
 * them after `after` (a keyset's condition). A failed plan is one that holds
 * a failed step, or that a branching condition failed (its step: the one whose
 * condition held), and is not cancelled; its failed step is its first failed
 * step, else that one. One forked from its failed step already is left out.
 */
function matching(
  ctx: ServiceContext,
  filter: z.output<typeof failedPlansFilter>,
  page: ReturnType<typeof keyset>,
  limit: number,
): SQL {
  const conditions: SQL[] = [];
  if (filter.tool === "agent") conditions.push(sql`failed.tool is null`);
  else if (filter.tool) conditions.push(sql`failed.tool = ${filter.tool}`);
  if (filter.text) {
    const pattern = `%${filter.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(sql`(research_plan.name ilike ${pattern} or failed.reason ilike ${pattern})`);
  }
  if (filter.since) conditions.push(sql`research_plan.updated_at >= ${filter.since}::date`);
  if (filter.until) {
    conditions.push(sql`research_plan.updated_at < ${filter.until}::date + 1`);
  }
  if (page.where) conditions.push(page.where);
  const filters = conditions.length > 0 ? sql` and ${sql.join(conditions, sql` and `)}` : sql``;
  return sql`
    with candidate as (
      select plan_id from plan_step where tenant_id = ${ctx.tenantId} and status = 'failed'
      union
      select id from research_plan where tenant_id = ${ctx.tenantId} and status = 'failed'
    )
    select research_plan.id as "planId", research_plan.name, research_plan.status,
      failed.id as "stepId", failed.step_order as "stepOrder", failed.step_type as "stepType",
      failed.tool, left(failed.reason, ${REASON_CHARS}) as reason,
      research_plan.updated_at as "changedAt",
      ${page.position.positionAt} as "positionAt", ${page.position.positionId} as "positionId"
    from candidate join research_plan on research_plan.id = candidate.plan_id
    cross join lateral (
      select * from (
        (select s.id, s.step_order, s.step_type, s.tool, s.failure_reason as reason, 0 as rank
          from plan_step s where s.plan_id = research_plan.id and s.status = 'failed'
          order by s.step_order limit 1)
        union all
        (select s.id, s.step_order, s.step_type, s.tool, a.payload->>'reason', 1
          from plan_audit_log a join plan_step s on s.id = a.step_id and s.plan_id = a.plan_id
          where research_plan.status = 'failed' and a.plan_id = research_plan.id
            and a.event_type = 'plan_modified' and a.payload->>'action' = 'branch_failed_plan'
            and a.chain_index is not null
          order by a.chain_index desc limit 1)
      ) found order by found.rank limit 1
    ) failed
    where research_plan.tenant_id = ${ctx.tenantId} and research_plan.status <> 'cancelled'
      and not exists (select 1 from research_plan fork
        where fork.forked_from_plan_id = research_plan.id and fork.forked_from_step_id = failed.id
          and fork.tenant_id = ${ctx.tenantId})
      ${filters}
    order by ${sql.join(page.orderBy, sql`, `)}
    limit ${limit}`;
}

/**
 * A plan's size as a fork reads and copies it: its steps' texts and JSON
 * values, sources, claims and artifacts, in bytes of text. Summed in the
 * database (a text's length is read from its header, without its value), so
 * nothing of the plan comes to the server to be measured.
 */
async function planBytes(ctx: ServiceContext, planId: string): Promise<number> {
  const [row] = await selectRows(
    ctx.db,
    z.object({ bytes: z.coerce.number() }),
    sql`select
      (select coalesce(sum(octet_length(s.instructions) + coalesce(octet_length(s.result_summary), 0)
          + coalesce(octet_length(s.output_formatting_notes), 0)
          + coalesce(octet_length(s.result::text), 0) + coalesce(octet_length(s.arguments::text), 0)
          + coalesce(octet_length(s.inputs::text), 0) + coalesce(octet_length(s.output_schema::text), 0)
          + coalesce(octet_length(s.step_execution_report::text), 0)), 0)
        from plan_step s where s.plan_id = ${planId}::uuid and s.tenant_id = ${ctx.tenantId}::uuid)
      + (select coalesce(sum(octet_length(e.href) + coalesce(octet_length(e.title), 0)
          + coalesce(octet_length(e.extract), 0)), 0)
        from plan_source e where e.plan_id = ${planId}::uuid and e.tenant_id = ${ctx.tenantId}::uuid)
      + (select coalesce(sum(octet_length(c.text) + octet_length(c.supports::text)
          + octet_length(c.contradicts::text)), 0)
        from step_claim c where c.plan_id = ${planId}::uuid and c.tenant_id = ${ctx.tenantId}::uuid)
      + (select coalesce(sum(octet_length(a.content::text) + coalesce(octet_length(a.content_text), 0)), 0)
        from research_artifact a where a.plan_id = ${planId}::uuid and a.tenant_id = ${ctx.tenantId}::uuid)
      as bytes`,
  );
  return row?.bytes ?? 0;
}

/** The preview: how many failed plans match (up to the action's cap) and a page of them. */
export async function listFailedPlans(
  ctx: ServiceContext,
  raw: z.input<typeof failedPlansPageInput>,
): Promise<FailedPlansPage> {
  const input = parseInput(failedPlansPageInput, raw);
  const page = keyset(FAILED_ORDER, input.cursor);
  const counted = await selectRows(
    ctx.db,
    z.object({ n: z.coerce.number() }),
    sql`select count(*) as n from (${matching(ctx, input.filter, keyset(FAILED_ORDER, undefined), FORK_FAILED_AT_ONCE + 1)}) matched`,
  );
  const n = counted[0]?.n ?? 0;
  const rows = await selectRows(
    ctx.db,
    failedPlanRow,
    matching(ctx, input.filter, page, FAILED_PAGE_SIZE + 1),
  );
  const { items, nextCursor } = page.pageOf(rows, FAILED_PAGE_SIZE);
  return {
    matching: Math.min(n, FORK_FAILED_AT_ONCE),
    more: n > FORK_FAILED_AT_ONCE,
    plans: items.map(({ positionAt: _at, positionId: _id, ...plan }) => plan),
    nextCursor,
  };
}

export const forkFailedPlansOutput = z.object({
  forked: z.array(
    z.object({
      planId: z.string(),
      name: z.string(),
      fromStepOrder: z.number(),
      forkPlanId: z.string(),
      forkName: z.string(),
      /** Set when the fork starts at an earlier checkpoint that is decided again. */
      reopened: z.string().optional(),
    }),
  ),
  /** Plans fork_plan refused, each with its reason; nothing was made for them. */
  refused: z.array(
    z.object({ planId: z.string(), name: z.string(), stepOrder: z.number(), reason: z.string() }),
  ),
  /** More plans matched than one action forks (by count or bytes): the same action again forks the next ones. */
  more: z.boolean(),
});

export type ForkedFailedPlans = z.infer<typeof forkFailedPlansOutput>;

/**
 * Forks each matching plan (newest change first, at most FORK_FAILED_AT_ONCE
 * and FORK_FAILED_BYTES) from its failed step: fork_plan's use case, with its checks and both
 * trails, one plan at a time. A refusal of one plan (a step before the failed
 * one not done; forked meanwhile) is reported and the others go on.
 */
export async function forkFailedPlans(
  ctx: ServiceContext,
  raw: FailedPlansFilter,
): Promise<ForkedFailedPlans> {
  const filter = parseInput(failedPlansFilter, raw);
  const plans = await selectRows(
    ctx.db,
    failedPlanRow,
    matching(ctx, filter, keyset(FAILED_ORDER, undefined), FORK_FAILED_AT_ONCE + 1),
  );
  const result: ForkedFailedPlans = { forked: [], refused: [], more: false };
  let copied = 0;
  for (const [index, plan] of plans.entries()) {
    if (index === FORK_FAILED_AT_ONCE) {
      result.more = true;
      break;
    }
    // Measured before the fork reads it; the first plan is forked whatever its size, so each action goes on.
    const bytes = await planBytes(ctx, plan.planId);
    if (index > 0 && copied + bytes > FORK_FAILED_BYTES) {
      result.more = true;
      break;
    }
    copied += bytes;
    try {
      const fork = await forkPlan(
        ctx,
        { planId: plan.planId, fromStepId: plan.stepId },
        { once: true },
      );
      result.forked.push({
        planId: plan.planId,
        name: plan.name,
        fromStepOrder: fork.forkedFrom.stepOrder,
        forkPlanId: fork.planId,
        forkName: fork.name,
        ...(fork.reopened ? { reopened: fork.reopened } : {}),
      });
    } catch (error) {
      if (!isAppError(error)) throw error;
      result.refused.push({
        planId: plan.planId,
        name: plan.name,
        stepOrder: plan.stepOrder,
        reason: error.message,
      });
    }
  }
  return result;
}
