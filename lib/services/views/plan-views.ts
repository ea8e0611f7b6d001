/**
 * Read models for the web UI: the plans list with filters and paging, the
 * reviewer's inbox count, a plan's page with its audit trail and the bindings
 * between its steps, and the admin's views of stalled and paused work and the
 * tool-call log. Reads only; every query is scoped to the tenant.
 */
import type { EvidenceCursors } from "../evidence/read-evidence";
import "server-only";
import {
  and,
  asc,
  count,
  desc,
  eq,
  gte,
  ilike,
  inArray,
  isNotNull,
  lte,
  notInArray,
  or,
  sql,
} from "drizzle-orm";
import { z } from "zod";
import {
  apiKeys,
  mcpToolCallLog,
  oauthClients,
  oauthGrants,
  planAuditLog,
  planSteps,
  researchPlans,
} from "../../db/schema";
import { undefinedIfNotFound } from "../../plan-engine/app-error";
import { findBindings } from "../../plan-engine/bindings";
import { splitUserFeedback } from "../../plan-engine/decisions";
import { failingEndsPlan } from "../../plan-engine/modify";
import { computeProgress, stallWarnings } from "../../plan-engine/progress";
import { TERMINAL_PLAN_STATUSES } from "../../plan-engine/states";
import { checkPlanTrailInDatabase } from "../audit/audit-chain";
import { hasStalledStep, stallClock } from "../plans/mark-stalled-plans";
import {
  artifactSummaries,
  loadLatestDeliverable,
  loadPlanCore,
  type PlanCore,
} from "../research/research-context";
import { approvalsShown } from "../reviews/approvals";
import { readDecisionPolicy } from "../reviews/decision-rules";
import { fitting } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { editableJsonText, MAX_STEP_IO_BYTES } from "../shared/fields";
import { cursorField, keyset, readPage } from "../shared/pagination";
import { getPlan, loadStepSummaries } from "../shared/plan-access";
import { parseInput } from "../shared/validation";
import { shorten, shortenJson } from "./full-values";

export const PLAN_FILTERS = [
  "active",
  "awaiting_review",
  "stalled",
  "completed",
  "failed",
  "cancelled",
] as const;
export type PlanFilter = (typeof PLAN_FILTERS)[number];

export const listPlansInput = z.object({
  filter: z.enum(PLAN_FILTERS).optional(),
  q: z.string().trim().max(200).optional(),
  cursor: cursorField,
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
});

/**
 * How much of a plan's question the plans list shows (two lines of it are
 * seen): 100 plans a page with 5,000-character questions would be megabytes.
 */
const LIST_QUESTION_CHARS = 300;

export async function listPlans(ctx: ServiceContext, raw: z.input<typeof listPlansInput>) {
  const input = parseInput(listPlansInput, raw);
  const now = new Date();
  const stalledStep = hasStalledStep(sql`${researchPlans.id}`, ctx);
  const conditions = [eq(researchPlans.tenantId, ctx.tenantId)];
  if (input.filter === "active") {
    conditions.push(notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]));
  } else if (input.filter === "stalled") {
    // Stalled as the UI shows it: marked so, or executing with a step its holder stopped renewing.
    conditions.push(
      or(
        eq(researchPlans.status, "stalled"),
        and(eq(researchPlans.status, "executing"), stalledStep),
      ) ?? sql`false`,
    );
  } else if (input.filter) {
    conditions.push(eq(researchPlans.status, input.filter));
  }
  if (input.q) {
    const pattern = `%${input.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(
      or(ilike(researchPlans.name, pattern), ilike(researchPlans.researchQuestion, pattern)) ??
        sql`false`,
    );
  }
  const where = and(...conditions);
  const page = keyset(
    { list: "plans page", at: researchPlans.updatedAt, id: researchPlans.id },
    input.cursor,
  );
  const [total] = await ctx.db.select({ n: count() }).from(researchPlans).where(where);
  const { items: plans, nextCursor } = await readPage(
    ctx.db,
    researchPlans,
    where,
    page,
    input.pageSize,
  );
  const ids = plans.map((p) => p.id);
  const steps =
    ids.length === 0
      ? []
      : await ctx.db
          .select({
            id: planSteps.id,
            planId: planSteps.planId,
            stepOrder: planSteps.stepOrder,
            status: planSteps.status,
            startedAt: planSteps.startedAt,
            leaseExpiresAt: planSteps.leaseExpiresAt,
            updatedAt: planSteps.updatedAt,
          })
          .from(planSteps)
          .where(and(eq(planSteps.tenantId, ctx.tenantId), inArray(planSteps.planId, ids)));
  const activity =
    ids.length === 0
      ? []
      : await ctx.db
          .select({
            planId: planAuditLog.planId,
            last: sql<string>`max(${planAuditLog.createdAt})`,
          })
          .from(planAuditLog)
          .where(and(eq(planAuditLog.tenantId, ctx.tenantId), inArray(planAuditLog.planId, ids)))
          .groupBy(planAuditLog.planId);
  return {
    ...input,
    total: total?.n ?? 0,
    nextCursor,
    plans: plans.map((plan) => {
      const own = steps.filter((s) => s.planId === plan.id);
      const last = activity.find((a) => a.planId === plan.id)?.last;
      const lastActivity = last ? new Date(last) : plan.updatedAt;
      return {
        planId: plan.id,
        name: plan.name,
        researchQuestion: shownQuestion(plan.researchQuestion),
        status: plan.status,
        progress: computeProgress(own.map((s) => s.status)),
        stallWarnings: stallWarnings(own, now, stallClock(ctx)),
        lastActivityAt: (lastActivity > plan.updatedAt
          ? lastActivity
          : plan.updatedAt
        ).toISOString(),
      };
    }),
  };
}

function shownQuestion(question: string): string {
  const shown = shorten(question, LIST_QUESTION_CHARS);
  return shown.shortened ? `${shown.text}…` : shown.text;
}

export type PlanListItem = Awaited<ReturnType<typeof listPlans>>["plans"][number];

/** The reviewer's inbox: plans of the tenant waiting for a person's decision. */
export async function countAwaitingReview(ctx: ServiceContext): Promise<number> {
  const [row] = await ctx.db
    .select({ n: count() })
    .from(researchPlans)
    .where(
      and(eq(researchPlans.tenantId, ctx.tenantId), eq(researchPlans.status, "awaiting_review")),
    );
  return row?.n ?? 0;
}

export const AUDIT_PAGE_SIZE = 25;

/**
 * Every binding of a step on an earlier step's result, as an edge of the flow
 * from the producing step to the consuming one: one edge per pair and field,
 * carrying the binding texts. `{{plan.researchQuestion}}` reads no step, so it
 * draws no edge.
 */
function bindingEdges(steps: PlanCore["steps"]) {
  const idOf = new Map(steps.map((s) => [s.stepOrder, s.stepId]));
  return steps.flatMap((step) =>
    (["arguments", "inputs"] as const).flatMap((field) => {
      const byProducer = new Map<number, Set<string>>();
      for (const binding of findBindings(step[field]).bindings) {
        if (binding.kind !== "step") continue;
        const texts = byProducer.get(binding.stepOrder) ?? new Set<string>();
        byProducer.set(binding.stepOrder, texts.add(binding.text));
      }
      return [...byProducer].flatMap(([fromStepOrder, texts]) => {
        const fromStepId = idOf.get(fromStepOrder);
        return fromStepId
          ? [
              {
                fromStepId,
                fromStepOrder,
                toStepId: step.stepId,
                toStepOrder: step.stepOrder,
                field,
                bindings: [...texts],
              },
            ]
          : [];
      });
    }),
  );
}

export type BindingEdge = ReturnType<typeof bindingEdges>[number];

/**
 * The most JSON text of each list of evidence the plan page shows: HTML writes
 * a quote mark as six bytes and the page carries its data twice (the markup
 * and React's payload), so a page holds a quarter of a tool's page.
 */
export const PLAN_PAGE_EVIDENCE_BYTES = 24 * 1024;

/**
 * The most JSON text of what one page of the plan's Steps section shows of its
 * steps (each long value shortened, every feedback and condition after it),
 * for the same reasons as its evidence: 200 steps at their limits would be
 * megabytes of HTML. A page shows at least one step.
 */
export const PLAN_PAGE_STEP_BYTES = 48 * 1024;

/** How much of each feedback's summary and suggestions the plan page shows. */
const FEEDBACK_PREVIEW_CHARS = 1_000;

/** Where the plan page's lists start: its evidence's cursors, and its steps'. */
export type PlanPageCursors = EvidenceCursors & { stepsCursor?: string };

/**
 * The texts the Steps section shows of a step (steps-section.tsx, step-io.tsx),
 * as it shows them; `conditions`: those after it.
 */
function shownTexts(
  step: PlanCore["steps"][number],
  conditions: PlanCore["branchingConditions"],
): unknown[] {
  const { original, feedback } = splitUserFeedback(step.instructions);
  const json = (value: unknown) => (value === null ? null : shortenJson(value).text);
  return [
    step.stepType,
    shorten(original).text,
    ...feedback.map((text) => shorten(text).text),
    step.resultSummary === null ? null : shorten(step.resultSummary).text,
    step.failureReason === null ? null : shorten(step.failureReason).text,
    json(step.result),
    ...Object.values(step.stepExecutionReport ?? {}).map(json),
    json(step.arguments),
    json(step.inputs),
    json(step.outputSchema),
    ...conditions.map((c) => c.conditionExpression),
  ];
}

/** How many of a plan's artifacts its page lists (newest first); the rest are counted, and found in the Library. */
export const PLAN_PAGE_ARTIFACTS = 10;

/**
 * The plan page: the plan, its steps, reviews, newest deliverable and feedback,
 * its newest artifacts by title and excerpt (never their content) with their
 * count, stall information, the bindings between steps, the arguments each
 * server-run step last ran with, one page of its audit trail, newest first, and
 * whether the whole trail's hash chain holds (`trail`, a promise: the check is
 * the slowest read, so the page renders around it). It is read again every few
 * seconds while the plan runs, so it reads only what it shows. Its Steps
 * section shows one page of the steps (`stepsPage`, within
 * PLAN_PAGE_STEP_BYTES, from `stepsCursor`); the flow and timeline draw every
 * step by its type and status.
 */
export async function getPlanPage(
  ctx: ServiceContext,
  planId: string,
  auditCursor?: string,
  { stepsCursor, ...evidenceCursors }: PlanPageCursors = {},
) {
  if (!z.uuid().safeParse(planId).success) return undefined;
  // Whether the trail's hash chain holds: the database recomputes every digest
  // of the trail (most of this read's time at 10,000 rows), so the check starts
  // first, on a connection of its own, and runs while the reads below are made
  // and the page renders; only the part of the page that shows it waits for it.
  // Its failure reaches whoever awaits it; the catch only keeps a page that
  // never gets there (a plan not found) from an unhandled rejection.
  const trail = checkPlanTrailInDatabase(ctx.db, planId, ctx.tenantId);
  trail.catch(() => {});
  const read = await ctx.db.transaction(async (tx) => {
    // Another tenant's plan, or none: the page answers 404 either way.
    const context = await undefinedIfNotFound(
      loadPlanCore(tx, ctx, planId, {
        pendingProposalsOnly: true,
        evidence: { ...evidenceCursors, pageBytes: PLAN_PAGE_EVIDENCE_BYTES },
      }),
    );
    if (!context) return undefined;
    // Refused once the plan is found, so another tenant's plan is a 404 whatever the cursor.
    const auditPage = keyset(
      { list: "plan page audit", at: planAuditLog.seq, sequence: true, id: planAuditLog.id },
      auditCursor,
      "auditCursor",
    );
    const stepsOrder = keyset(
      {
        list: "plan page steps",
        at: planSteps.stepOrder,
        sequence: true,
        id: planSteps.id,
        direction: "asc",
      },
      stepsCursor,
      "stepsCursor",
    );
    // The ids of the steps from the cursor on: the page's are those whose shown texts fit.
    const byId = new Map(context.steps.map((s) => [s.stepId, s]));
    const after = (
      await tx
        .select({ id: planSteps.id, ...stepsOrder.position })
        .from(planSteps)
        .where(
          and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId), stepsOrder.where),
        )
        .orderBy(...stepsOrder.orderBy)
    ).flatMap((row) => {
      // A step added since the core was read waits for the next read.
      const step = byId.get(row.id);
      return step ? [{ ...row, step }] : [];
    });
    const conditionsAfter = new Map<string, PlanCore["branchingConditions"]>();
    for (const condition of context.branchingConditions) {
      const list = conditionsAfter.get(condition.afterStepId);
      if (list) list.push(condition);
      else conditionsAfter.set(condition.afterStepId, [condition]);
    }
    const stepsShown = stepsOrder.fitOf(after, after.length, PLAN_PAGE_STEP_BYTES, ({ step }) =>
      shownTexts(step, conditionsAfter.get(step.stepId) ?? []),
    );
    const shownIds = new Set(stepsShown.items.map(({ id }) => id));
    const artifacts = await artifactSummaries(tx, ctx, planId, PLAN_PAGE_ARTIFACTS);
    // Who the team lets decide.
    const decisionPolicy = await readDecisionPolicy(tx, ctx.tenantId);
    const where = and(eq(planAuditLog.planId, planId), eq(planAuditLog.tenantId, ctx.tenantId));
    const [total] = await tx.select({ n: count() }).from(planAuditLog).where(where);
    const audit = await readPage(tx, planAuditLog, where, auditPage, AUDIT_PAGE_SIZE);
    // A server step's resolved arguments are kept only on the step_started row
    // Cairn wrote when it ran the step; the latest one is the run its result
    // (or failure) came from. Plans without server steps skip the query.
    const serverStepIds = context.steps.filter((s) => s.tool).map((s) => s.stepId);
    const runs =
      serverStepIds.length === 0
        ? []
        : await tx
            .selectDistinctOn([planAuditLog.stepId], {
              stepId: planAuditLog.stepId,
              id: planAuditLog.id,
              arguments: sql<unknown>`${planAuditLog.payload} -> 'arguments'`,
              createdAt: planAuditLog.createdAt,
            })
            .from(planAuditLog)
            .where(
              and(
                where,
                eq(planAuditLog.eventType, "step_started"),
                eq(planAuditLog.actorType, "system"),
                inArray(planAuditLog.stepId, serverStepIds),
              ),
            )
            .orderBy(planAuditLog.stepId, desc(planAuditLog.seq));
    const now = new Date();
    const summaries = await loadStepSummaries(tx, ctx, planId);
    const warnings = stallWarnings(summaries, now, stallClock(ctx));
    // In progress without a lease: a person's modify sent it back, and no agent
    // has picked it up again yet (the claim rule's redo_requested).
    const sentBack = new Set(
      summaries
        .filter((s) => s.status === "in_progress" && s.leaseExpiresAt === null)
        .map((s) => s.id),
    );
    const { cancellation, awaitingSteps } = await getPlan(tx, ctx, planId);
    const approvals = await approvalsShown(
      tx,
      ctx.tenantId,
      context.reviews.filter((r) => r.status === "pending").map((r) => r.reviewRequestId),
    );
    const steps = context.steps.map((step) => {
      const run = runs.find((r) => r.stepId === step.stepId);
      const isSentBack = sentBack.has(step.stepId);
      return {
        ...step,
        // A sent-back step starts again when an agent picks it up: until then
        // the page shows no start (the modify's own time is not one).
        startedAt: isSentBack ? null : step.startedAt,
        /** The arguments Cairn last ran this server step with, bindings resolved, and its audit row. */
        ranWith: run
          ? { arguments: run.arguments, at: run.createdAt.toISOString(), auditId: run.id }
          : null,
        /** Sent back to the agent with feedback, and not picked up again yet. */
        sentBack: isSentBack,
      };
    });
    return {
      ...context,
      artifacts,
      reviews: context.reviews.map((review) => ({
        ...review,
        // What the review shows changed since it was requested (modify_plan rewrote the step).
        instructionsChanged:
          review.currentDigest !== null && review.currentDigest !== review.contentDigest,
        /** "k of N" and who approved, for a pending review needing several approvals. */
        approvals: approvals.get(review.reviewRequestId) ?? null,
      })),
      steps,
      // Shortened: ten of them at their longest, in quote marks, were a megabyte of HTML.
      feedback: context.feedback.map((item) => ({
        ...item,
        summary: shorten(item.summary, FEEDBACK_PREVIEW_CHARS),
        improvementSuggestions:
          item.improvementSuggestions === null
            ? null
            : shorten(item.improvementSuggestions, FEEDBACK_PREVIEW_CHARS),
      })),
      stepsPage: {
        cursor: stepsCursor ?? null,
        nextCursor: stepsShown.nextCursor,
        steps: steps.filter((step) => shownIds.has(step.stepId)),
      },
      bindingEdges: bindingEdges(context.steps),
      stallWarnings: warnings,
      stallThresholdSeconds: ctx.stallThresholdSeconds,
      cancellation,
      /** A fired add_steps waits for the agent's steps: the plan is not running meanwhile. */
      awaitingSteps: awaitingSteps
        ? { stepOrder: awaitingSteps.stepOrder, condition: awaitingSteps.conditionExpression }
        : null,
      now: now.toISOString(),
      decisionPolicy,
      audit: {
        cursor: auditCursor ?? null,
        nextCursor: audit.nextCursor,
        total: total?.n ?? 0,
        entries: audit.items.map((entry) => ({
          id: entry.id,
          eventType: entry.eventType,
          actorType: entry.actorType,
          actorLabel: entry.actorLabel,
          stepId: entry.stepId,
          payload: entry.payload,
          createdAt: entry.createdAt.toISOString(),
        })),
      },
    };
  });
  return read && { ...read, trail };
}

export type PlanPage = NonNullable<Awaited<ReturnType<typeof getPlanPage>>>;

/**
 * A plan's name and newest deliverable, for its download: two reads, none of
 * the page's others (its trail check above all). Undefined for a plan not in
 * the tenant.
 */
export async function getPlanDeliverable(ctx: ServiceContext, planId: string) {
  if (!z.uuid().safeParse(planId).success) return undefined;
  const [plan] = await ctx.db
    .select({ name: researchPlans.name })
    .from(researchPlans)
    .where(and(eq(researchPlans.id, planId), eq(researchPlans.tenantId, ctx.tenantId)));
  if (!plan) return undefined;
  return { planName: plan.name, deliverable: await loadLatestDeliverable(ctx.db, ctx, planId) };
}

/** How many plans the stalled plans' page reads, least recently active first. */
const STALLED_PLANS_READ = 50;
/** How much of a failed step's reason the stalled plans' page shows (the plan page shows more). */
const STALLED_REASON_CHARS = 200;
/** The most JSON text of the stalled plans' cards one page shows, as the plan page's steps. */
const STALLED_PAGE_BYTES = 48 * 1024;

/**
 * Admin: work that needs a person, least recently active first. `stalled`:
 * plans marked stalled, executing plans with a step whose holder stopped
 * renewing it, active plans holding a failed step (which retry_step can send
 * back to pending), and plans waiting for their agent to add steps (a fired
 * add_steps: the agent may have gone; an admin can cancel them). `paused`: active plans whose server-run steps stopped, with
 * the reason; a plan listed there is not listed again under `stalled`, but
 * keeps its stalled and failed steps (a tool error leaves its step failed).
 * Bounded however many plans need a person and however long their failure
 * reasons: the STALLED_PLANS_READ least recently active plans are read, each
 * step without its long values but the failure reason's beginning, and the
 * cards shown are those that fit in STALLED_PAGE_BYTES (`more`: whether
 * others wait; they show here as these are dealt with).
 */
export async function listStalledPlans(ctx: ServiceContext) {
  const now = new Date();
  const candidates = await ctx.db
    .select()
    .from(researchPlans)
    .where(
      and(
        eq(researchPlans.tenantId, ctx.tenantId),
        or(
          eq(researchPlans.status, "stalled"),
          and(eq(researchPlans.status, "executing"), hasStalledStep(sql`${researchPlans.id}`, ctx)),
          and(
            inArray(researchPlans.status, ["planning", "executing"]),
            sql`exists (select 1 from ${planSteps} where ${planSteps.planId} = ${researchPlans.id} and ${planSteps.status} = 'failed')`,
          ),
          and(
            notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]),
            isNotNull(researchPlans.pauseReason),
          ),
          and(
            notInArray(researchPlans.status, [...TERMINAL_PLAN_STATUSES]),
            isNotNull(researchPlans.awaitingSteps),
          ),
        ),
      ),
    )
    .orderBy(asc(researchPlans.updatedAt), asc(researchPlans.id))
    .limit(STALLED_PLANS_READ + 1);
  const read = candidates.slice(0, STALLED_PLANS_READ);
  const ids = read.map((p) => p.id);
  const steps =
    ids.length === 0
      ? []
      : await ctx.db
          .select({
            id: planSteps.id,
            planId: planSteps.planId,
            stepOrder: planSteps.stepOrder,
            status: planSteps.status,
            startedAt: planSteps.startedAt,
            leaseExpiresAt: planSteps.leaseExpiresAt,
            updatedAt: planSteps.updatedAt,
            failureReason: sql<
              string | null
            >`left(${planSteps.failureReason}, ${sql.raw(String(STALLED_REASON_CHARS))})`,
            failureReasonCut: sql<boolean>`coalesce(char_length(${planSteps.failureReason}) > ${sql.raw(String(STALLED_REASON_CHARS))}, false)`,
          })
          .from(planSteps)
          .where(and(eq(planSteps.tenantId, ctx.tenantId), inArray(planSteps.planId, ids)))
          .orderBy(asc(planSteps.stepOrder));
  const stepsOf = new Map<string, typeof steps>();
  for (const step of steps) {
    const own = stepsOf.get(step.planId);
    if (own) own.push(step);
    else stepsOf.set(step.planId, [step]);
  }
  const cards = read.map((plan) => {
    const own = stepsOf.get(plan.id) ?? [];
    return {
      planId: plan.id,
      name: plan.name,
      status: plan.status,
      lastActivityAt: plan.updatedAt.toISOString(),
      stalledSteps: stallWarnings(own, now, stallClock(ctx)).map((warning) => ({
        ...warning,
        failEndsPlan: failingEndsPlan(plan, own, warning.stepId),
      })),
      failedSteps: own
        .filter((s) => s.status === "failed")
        .map((s) => ({
          stepId: s.id,
          stepOrder: s.stepOrder,
          failureReason:
            s.failureReason && s.failureReasonCut ? `${s.failureReason}…` : s.failureReason,
        })),
      pauseReason: plan.pauseReason,
      awaitingSteps: plan.awaitingSteps,
    };
  });
  const shown = cards.slice(0, fitting(cards, STALLED_PAGE_BYTES));
  return {
    more: shown.length < candidates.length,
    stalled: shown.filter((card) => !card.pauseReason),
    paused: shown.flatMap(({ pauseReason, ...card }) =>
      pauseReason ? [{ ...card, pauseReason }] : [],
    ),
  };
}

export type StalledPlans = Awaited<ReturnType<typeof listStalledPlans>>;

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

/**
 * How many steps from the fork point the fork form lets a person edit, and
 * the JSON text of their instructions and arguments it holds (at least the
 * first step's, whole); later ones are forked as they are.
 */
export const FORK_FORM_STEPS = 20;
export const FORK_FORM_BYTES = 64 * 1024;

/**
 * The "Fork from here" form (docs/history-and-forks.md): the plan's name, the
 * step the fork starts at and the next FORK_FORM_STEPS steps with their
 * instructions and a server-run step's arguments, as the person may edit
 * them. Undefined for a plan or step not in the tenant.
 */
export async function getForkForm(ctx: ServiceContext, planId: string, stepId: string) {
  if (!z.uuid().safeParse(planId).success || !z.uuid().safeParse(stepId).success) {
    return undefined;
  }
  const plan = await undefinedIfNotFound(getPlan(ctx.db, ctx, planId));
  if (!plan) return undefined;
  const [from] = await ctx.db
    .select({ stepOrder: planSteps.stepOrder })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.id, stepId),
        eq(planSteps.planId, plan.id),
        eq(planSteps.tenantId, ctx.tenantId),
      ),
    );
  if (!from) return undefined;
  const steps = await ctx.db
    .select({
      stepId: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      instructions: planSteps.instructions,
      tool: planSteps.tool,
      arguments: planSteps.arguments,
    })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.planId, plan.id),
        eq(planSteps.tenantId, ctx.tenantId),
        gte(planSteps.stepOrder, from.stepOrder),
      ),
    )
    .orderBy(asc(planSteps.stepOrder))
    .limit(FORK_FORM_STEPS + 1);
  const shown = steps.slice(0, FORK_FORM_STEPS).map(({ arguments: args, ...step }) => ({
    ...step,
    argumentsText: step.tool ? editableJsonText(args, MAX_STEP_IO_BYTES) : null,
  }));
  // The page carries each value twice (the form, and its props for the browser).
  const fit = fitting(shown, FORK_FORM_BYTES);
  return {
    planId: plan.id,
    name: plan.name,
    fromStepId: stepId,
    fromStepOrder: from.stepOrder,
    steps: shown.slice(0, fit),
    moreSteps: steps.length > fit,
  };
}
