/**
 * Read model for the admin overview at /admin: one count per admin page, each a
 * single aggregate query scoped to the tenant (the stalled count reuses the
 * stalled page's own query, so the two never disagree). Reads only.
 */
import "server-only";
import { and, count, eq, gte, isNull, sql } from "drizzle-orm";
import { apiKeys, mcpToolCallLog, skillExecutions, users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { listStalledPlans } from "./stalled-plans";

/** The window of the overview's tool-call count. */
export const TOOL_CALL_WINDOW_HOURS = 24;

export type AdminOverview = {
  /** Plans the stalled page lists: stalled, with a step its holder stopped renewing, holding a failed step, or waiting for steps. */
  stalledPlans: number;
  /** Plans paused on a server-run step (listed apart on the same page). */
  pausedPlans: number;
  /** Tool calls of the last `TOOL_CALL_WINDOW_HOURS` hours, and how many of them failed. */
  toolCalls: { calls: number; errors: number };
  /** Research skill runs ever recorded. */
  skillRuns: number;
  users: number;
  /** API keys not revoked, of users not disabled: the keys that work. */
  activeApiKeys: number;
};

export async function adminOverview(ctx: ServiceContext, now = new Date()): Promise<AdminOverview> {
  const since = new Date(now.getTime() - TOOL_CALL_WINDOW_HOURS * 3600 * 1000);
  const stalled = await listStalledPlans(ctx);
  const [calls] = await ctx.db
    .select({
      calls: sql<number>`count(*)::int`,
      errors: sql<number>`count(*) filter (where ${mcpToolCallLog.isError})::int`,
    })
    .from(mcpToolCallLog)
    .where(and(eq(mcpToolCallLog.tenantId, ctx.tenantId), gte(mcpToolCallLog.createdAt, since)));
  const [runs] = await ctx.db
    .select({ n: count() })
    .from(skillExecutions)
    .where(eq(skillExecutions.tenantId, ctx.tenantId));
  const [people] = await ctx.db
    .select({ n: count() })
    .from(users)
    .where(eq(users.tenantId, ctx.tenantId));
  const [keys] = await ctx.db
    .select({ n: count() })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .where(
      and(eq(apiKeys.tenantId, ctx.tenantId), isNull(apiKeys.revokedAt), isNull(users.disabledAt)),
    );
  return {
    stalledPlans: stalled.stalled.length,
    pausedPlans: stalled.paused.length,
    toolCalls: { calls: calls?.calls ?? 0, errors: calls?.errors ?? 0 },
    skillRuns: runs?.n ?? 0,
    users: people?.n ?? 0,
    activeApiKeys: keys?.n ?? 0,
  };
}
