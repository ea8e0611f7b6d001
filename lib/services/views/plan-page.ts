/**
 * A plan's page: the plan, a page of its steps, its reviews, newest
 * deliverable and feedback, its newest artifacts, the bindings between its
 * steps, one page of its audit trail and whether the trail's hash chain holds;
 * and its deliverable for download. Reads only, scoped to the tenant.
 */
import type { EvidenceCursors } from "../evidence/read-evidence";
import "server-only";
import { and, count, desc, eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { planAuditLog, planSteps, researchPlans } from "../../db/schema";
import { undefinedIfNotFound } from "../../plan-engine/app-error";
import { findBindings } from "../../plan-engine/bindings";
import { splitUserFeedback } from "../../plan-engine/decisions";
import { stallWarnings } from "../../plan-engine/progress";
import { checkPlanTrailInDatabase } from "../audit/audit-chain";
import { stallClock } from "../plans/mark-stalled-plans";
import { loadLatestDeliverable } from "../research/latest-deliverable";
import { artifactSummaries } from "../research/plan-artifacts";
import { loadPlanCore, type PlanCore } from "../research/plan-core";
import { approvalsShown } from "../reviews/approvals";
import { readDecisionPolicy } from "../reviews/decision-rules";
import type { ServiceContext } from "../shared/context";
import { keyset, readPage } from "../shared/pagination";
import { getPlan, loadStepSummaries } from "../shared/plan-access";
import { shorten, shortenJson } from "./full-values";

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
