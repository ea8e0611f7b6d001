/** The admin's tool-call log: the tenant's MCP calls with filters, a page at a time, and each tool's error rate and latency. */
import "server-only";
import { and, count, eq, gte, lte, sql } from "drizzle-orm";
import { z } from "zod";
import { apiKeys, mcpToolCallLog, oauthClients, oauthGrants } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { cursorField, keyset } from "../shared/pagination";
import { parseInput } from "../shared/validation";

export const toolCallFilterInput = z.object({
  tool: z.string().trim().max(100).optional(),
  apiKeyId: z.uuid().optional(),
  errors: z.enum(["only", "none"]).optional(),
  since: z.coerce.date().optional(),
  until: z.coerce.date().optional(),
  cursor: cursorField,
});

const TOOL_CALL_PAGE_SIZE = 50;

/** Admin: the tool-call log with filters, and per tool the error rate and latency percentiles. */
export async function getToolCallLog(
  ctx: ServiceContext,
  raw: z.input<typeof toolCallFilterInput>,
) {
  const input = parseInput(toolCallFilterInput, raw);
  const conditions = [eq(mcpToolCallLog.tenantId, ctx.tenantId)];
  if (input.tool) conditions.push(eq(mcpToolCallLog.toolName, input.tool));
  if (input.apiKeyId) conditions.push(eq(mcpToolCallLog.apiKeyId, input.apiKeyId));
  if (input.errors === "only") conditions.push(eq(mcpToolCallLog.isError, true));
  if (input.errors === "none") conditions.push(eq(mcpToolCallLog.isError, false));
  if (input.since) conditions.push(gte(mcpToolCallLog.createdAt, input.since));
  if (input.until) conditions.push(lte(mcpToolCallLog.createdAt, input.until));
  const where = and(...conditions);
  const page = keyset(
    { list: "tool-call log", at: mcpToolCallLog.createdAt, id: mcpToolCallLog.id },
    input.cursor,
  );
  const [total] = await ctx.db.select({ n: count() }).from(mcpToolCallLog).where(where);
  const rows = await ctx.db
    .select({
      ...page.position,
      id: mcpToolCallLog.id,
      toolName: mcpToolCallLog.toolName,
      // A connected app's calls carry no key: they are named after the app.
      keyName: sql<
        string | null
      >`coalesce(${apiKeys.name}, 'app ' || coalesce(${oauthClients.clientName}, ${oauthClients.clientId}))`,
      durationMs: mcpToolCallLog.durationMs,
      isError: mcpToolCallLog.isError,
      errorCode: mcpToolCallLog.errorCode,
      errorMessage: mcpToolCallLog.errorMessage,
      requestBytes: mcpToolCallLog.requestBytes,
      responseBytes: mcpToolCallLog.responseBytes,
      createdAt: mcpToolCallLog.createdAt,
    })
    .from(mcpToolCallLog)
    .leftJoin(apiKeys, eq(apiKeys.id, mcpToolCallLog.apiKeyId))
    .leftJoin(oauthGrants, eq(oauthGrants.id, mcpToolCallLog.oauthGrantId))
    .leftJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(where, page.where))
    .orderBy(...page.orderBy)
    .limit(TOOL_CALL_PAGE_SIZE + 1);
  const { items: calls, nextCursor } = page.pageOf(rows, TOOL_CALL_PAGE_SIZE);
  const stats = await ctx.db
    .select({
      toolName: mcpToolCallLog.toolName,
      calls: sql<number>`count(*)::int`,
      errors: sql<number>`count(*) filter (where ${mcpToolCallLog.isError})::int`,
      p50: sql<number>`percentile_cont(0.5) within group (order by ${mcpToolCallLog.durationMs})`,
      p95: sql<number>`percentile_cont(0.95) within group (order by ${mcpToolCallLog.durationMs})`,
      p99: sql<number>`percentile_cont(0.99) within group (order by ${mcpToolCallLog.durationMs})`,
    })
    .from(mcpToolCallLog)
    .where(where)
    .groupBy(mcpToolCallLog.toolName)
    .orderBy(mcpToolCallLog.toolName);
  const tools = await ctx.db
    .selectDistinct({ toolName: mcpToolCallLog.toolName })
    .from(mcpToolCallLog)
    .where(eq(mcpToolCallLog.tenantId, ctx.tenantId))
    .orderBy(mcpToolCallLog.toolName);
  return {
    filters: input,
    total: total?.n ?? 0,
    nextCursor,
    calls: calls.map(({ positionAt, positionId, ...c }) => ({
      ...c,
      createdAt: c.createdAt.toISOString(),
    })),
    stats: stats.map((s) => ({
      ...s,
      errorRate: s.calls === 0 ? 0 : s.errors / s.calls,
      p50: Number(s.p50),
      p95: Number(s.p95),
      p99: Number(s.p99),
    })),
    toolNames: tools.map((t) => t.toolName),
  };
}
