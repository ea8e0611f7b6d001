/**
 * A plan's page: the plan, a page of its steps, its pending review, newest
 * deliverable and feedback, its newest artifacts, the bindings between its
 * steps, one page of its audit trail and whether the trail's hash chain holds;
 * and its deliverable for download. Reads only, scoped to the tenant.
 */
import "server-only";
import { and, asc, count, eq, isNotNull, type SQL, sql } from "drizzle-orm";
import { z } from "zod";
import { selectRows } from "../../db/rows";
import { sameTenant } from "../../db/same-tenant";
import { planAuditLog, planBranchingConditions, planSteps, researchPlans } from "../../db/schema";
import { isoTime } from "../../db/statement";
import { undefinedIfNotFound } from "../../plan-engine/app-error";
import { findBindings } from "../../plan-engine/bindings";
import { USER_FEEDBACK_MARK } from "../../plan-engine/decisions";
import { computeProgress, isSentBack, stallWarnings } from "../../plan-engine/progress";
import { STEP_STATUSES } from "../../plan-engine/states";
import { checkPlanTrailInDatabase } from "../audit/audit-chain";
import { type EvidenceCursors, loadPlanEvidence } from "../evidence/read-evidence";
import { readForkLinks } from "../plans/fork-links";
import { stallClock } from "../plans/mark-stalled-plans";
import { loadContextDeliverable } from "../research/context-pages";
import { loadLatestDeliverable } from "../research/latest-deliverable";
import { artifactSummaries } from "../research/plan-artifacts";
import { loadExecution, loadFeedback, planHeader } from "../research/plan-parts";
import { readDecisionPolicy } from "../reviews/decision-rules";
import type { ServiceContext } from "../shared/context";
import { keyset } from "../shared/pagination";
import { getPlan, loadStepSummaries } from "../shared/plan-access";
import { PREVIEW_CHARS, type Shortened, shorten, shortenedRow, shortenedSql } from "./full-values";
import { readPendingReviewRow } from "./pending-review";

export const AUDIT_PAGE_SIZE = 25;

/** What the flow reads of a step's arguments and inputs: the texts that may be bindings, as JSON writes them. */
const BINDING_TEXT = "\\{\\{[^{}]*\\}\\}";

/**
 * The texts of `candidates` (cut from a value's JSON text in the database) as
 * the value holds them: one that spans two strings is no text of the value,
 * and does not parse.
 */
const unescaped = (candidates: string[]) =>
  candidates.flatMap((candidate) => {
    try {
      return [JSON.parse(`"${candidate}"`) as string];
    } catch {
      return [];
    }
  });

/**
 * Every binding of a step on an earlier step's result, as an edge of the flow
 * from the producing step to the consuming one: one edge per pair and field,
 * carrying the binding texts. `{{plan.researchQuestion}}` reads no step, so it
 * draws no edge. A binding lies within one string, so the engine finds the
 * same ones in the `{{…}}` texts of a value as in the whole of it.
 */
function bindingEdges(steps: OutlineRow[]) {
  const idOf = new Map(steps.map((s) => [s.stepOrder, s.stepId]));
  return steps.flatMap((step) =>
    (["arguments", "inputs"] as const).flatMap((field) => {
      const byProducer = new Map<number, Set<string>>();
      const texts = field === "arguments" ? step.argumentBindings : step.inputBindings;
      for (const binding of findBindings(unescaped(texts)).bindings) {
        if (binding.kind !== "step") continue;
        const found = byProducer.get(binding.stepOrder) ?? new Set<string>();
        byProducer.set(binding.stepOrder, found.add(binding.text));
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
 * steps (each long value shortened, every condition after it), for the same
 * reasons as its evidence: 200 steps at their limits would be megabytes of
 * HTML. A page shows at least one step, and at most PLAN_PAGE_STEP_ROWS: the
 * rows one page reads, each long value cut in the database.
 */
export const PLAN_PAGE_STEP_BYTES = 48 * 1024;
export const PLAN_PAGE_STEP_ROWS = 20;

/** How much of each feedback's summary and suggestions the plan page shows. */
const FEEDBACK_PREVIEW_CHARS = 1_000;

/** Where the plan page's lists start: its evidence's cursors, and its steps'. */
export type PlanPageCursors = EvidenceCursors & { stepsCursor?: string };

/** How many of a plan's artifacts its page lists (newest first); the rest are counted, and found in the Library. */
export const PLAN_PAGE_ARTIFACTS = 10;

/** Every step as the flow, the timeline and the lists that name steps draw it: no long value. */
const outlineRow = z.object({
  stepId: z.string(),
  stepOrder: z.number(),
  stepType: z.string(),
  status: z.enum(STEP_STATUSES),
  startedAt: isoTime.nullable(),
  completedAt: isoTime.nullable(),
  tool: z.string().nullable(),
  carriedFromStepId: z.string().nullable(),
  /** The `{{…}}` texts of the step's arguments and inputs, as their JSON text writes them. */
  argumentBindings: z.array(z.string()),
  inputBindings: z.array(z.string()),
});
type OutlineRow = z.infer<typeof outlineRow>;

const outlineOf = (ctx: Pick<ServiceContext, "tenantId">, planId: string) => sql`select
    s.id as "stepId", s.step_order as "stepOrder", s.step_type as "stepType", s.status,
    s.started_at as "startedAt", s.completed_at as "completedAt", s.tool,
    s.carried_from_step_id as "carriedFromStepId",
    to_json(array(select m[1] from regexp_matches(coalesce(s.arguments::text, ''),
      ${BINDING_TEXT}, 'g') m)) as "argumentBindings",
    to_json(array(select m[1] from regexp_matches(coalesce(s.inputs::text, ''),
      ${BINDING_TEXT}, 'g') m)) as "inputBindings"
  from plan_step s
  where s.plan_id = ${planId}::uuid and s.tenant_id = ${ctx.tenantId}::uuid
  order by s.step_order`;

/** The kinds of work a step's execution report lists, each shown in a foldout of its own. */
export const REPORT_PARTS = [
  "thinking",
  "webSearches",
  "webFetches",
  "otherToolCalls",
  "subagents",
] as const;

/** A text value shortened in the database, or null. */
const shortenedOrNull = (value: SQL) =>
  sql`case when ${value} is null then null else ${shortenedSql(value)} end`;
/** A JSON value as indented text, shortened in the database, or null. */
const prettyOrNull = (value: SQL) => shortenedOrNull(sql`jsonb_pretty(${value})`);

/**
 * One part of the execution report: how many entries a list holds, whether it
 * is empty, whether it is text (else shown as JSON), what is shown of it.
 */
const reportPart = (part: string) => {
  const value = sql`(step.step_execution_report -> ${sql.raw(`'${part}'`)})`;
  return sql`case when ${value} is null then null else json_build_object(
    'count', case when jsonb_typeof(${value}) = 'array' then jsonb_array_length(${value}) end,
    'empty', ${value} in ('""'::jsonb, '[]'::jsonb),
    'isText', jsonb_typeof(${value}) = 'string',
    'value', ${shortenedSql(sql`case when jsonb_typeof(${value}) = 'string' then ${value} #>> '{}' else jsonb_pretty(${value}) end`)}) end`;
};

const reportPartRow = z
  .object({
    count: z.number().nullable(),
    empty: z.boolean(),
    isText: z.boolean(),
    value: shortenedRow,
  })
  .nullable();

/** A step as one page of the Steps section shows it: each long value cut in the database. */
const shownStepRow = z.object({
  positionAt: z.string(),
  positionId: z.string(),
  stepId: z.string(),
  confidence: z.number().nullable(),
  /** The instructions as written, then each person's feedback appended by a modify, each shortened. */
  instructions: z.tuple([shortenedRow], shortenedRow),
  resultSummary: shortenedRow.nullable(),
  failureReason: shortenedRow.nullable(),
  result: shortenedRow.nullable(),
  report: z
    .object(
      Object.fromEntries(REPORT_PARTS.map((part) => [part, reportPartRow])) as {
        [Part in (typeof REPORT_PARTS)[number]]: typeof reportPartRow;
      },
    )
    .nullable(),
  arguments: shortenedRow.nullable(),
  inputs: shortenedRow.nullable(),
  outputSchema: shortenedRow.nullable(),
  /** The arguments Cairn last ran this server step with, bindings resolved, and its audit row. */
  ranWith: z.object({ arguments: shortenedRow, at: isoTime, auditId: z.string() }).nullable(),
  /** The plan ended before anyone answered a review of this step. */
  reviewWithdrawn: z.boolean(),
});

/** The Steps section's order, step by step, from `stepsCursor` (refused when it is not one). */
export const planPageStepsOrder = (stepsCursor?: string) =>
  keyset(
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

/**
 * One page of the Steps section from the keyset's cursor: at most
 * PLAN_PAGE_STEP_ROWS + 1 steps, each long value cut in the database (a step
 * at its limits holds about 800 KB), the arguments a server step last ran
 * with from the step_started row of Cairn's latest run of it, found by its
 * key (`last_run_audit_id`), never by a search of the plan's trail.
 */
export const shownStepsOf = (
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  page: ReturnType<typeof keyset>,
) => sql`with page as (
    select plan_step.id, ${page.position.positionAt} as "positionAt",
      ${page.position.positionId} as "positionId"
    from plan_step
    where plan_step.plan_id = ${planId}::uuid and plan_step.tenant_id = ${ctx.tenantId}::uuid
      and ${page.where ?? sql`true`}
    order by ${sql.join(page.orderBy, sql`, `)}
    limit ${PLAN_PAGE_STEP_ROWS + 1})
  select page."positionAt", page."positionId", step.id as "stepId", step.confidence,
    (select json_agg(${shortenedSql(sql`part`)} order by n)
      from unnest(string_to_array(step.instructions, ${USER_FEEDBACK_MARK}::text))
        with ordinality as parts(part, n)) as instructions,
    ${shortenedOrNull(sql`step.result_summary`)} as "resultSummary",
    ${shortenedOrNull(sql`step.failure_reason`)} as "failureReason",
    ${prettyOrNull(sql`step.result`)} as result,
    case when step.step_execution_report is null then null else json_build_object(
      ${sql.join(
        REPORT_PARTS.map((part) => sql`${sql.raw(`'${part}'`)}, ${reportPart(part)}`),
        sql`, `,
      )}) end as report,
    ${prettyOrNull(sql`step.arguments`)} as arguments,
    ${prettyOrNull(sql`step.inputs`)} as inputs,
    ${prettyOrNull(sql`step.output_schema`)} as "outputSchema",
    ran.value as "ranWith",
    exists (select 1 from review_request withdrawn
      where withdrawn.step_id = step.id and withdrawn.status = 'withdrawn') as "reviewWithdrawn"
  from page
    join plan_step step on step.id = page.id
    left join lateral (
      select json_build_object(
          'arguments', ${shortenedSql(sql`coalesce(jsonb_pretty(run.payload -> 'arguments'), 'null')`)},
          'at', run.created_at, 'auditId', run.id) as value
        from plan_audit_log run
        -- The plan tested so no index serves it (lib/db/same-tenant.ts): with =,
        -- a generic plan made on a small trail went through the trail's index
        -- by plan, which reads every row of the plan's trail on a long one.
        where step.tool is not null and run.id = step.last_run_audit_id
          and run.plan_id is not distinct from step.plan_id) ran on true
  order by step.step_order, step.id`;

/**
 * The plan page: the plan, its steps, its pending review, newest deliverable
 * and feedback, its newest artifacts by title and excerpt (never their
 * content) with their count, stall information, the bindings between steps,
 * one page of its audit trail, newest first, and whether the whole trail's
 * hash chain holds (`trail`, a promise: the check is the slowest read, so the
 * page renders around it). It is read again every few seconds while the plan
 * runs, so it reads only what it shows, however much the plan holds: every
 * step by its type and status for the flow and the timeline (`steps`), one
 * page of them with each long value cut in the database for the Steps section
 * (`stepsPage`, within PLAN_PAGE_STEP_BYTES, from `stepsCursor`), and the
 * pending review with its long texts cut (reviewShownColumns).
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
    const plan = await undefinedIfNotFound(getPlan(tx, ctx, planId));
    if (!plan) return undefined;
    // Refused once the plan is found, so another tenant's plan is a 404 whatever the cursor.
    const auditPage = keyset(
      {
        list: "plan page trail",
        at: planAuditLog.chainIndex,
        sequence: true,
        id: planAuditLog.id,
      },
      auditCursor,
      "auditCursor",
    );
    const stepsOrder = planPageStepsOrder(stepsCursor);
    const outline = await selectRows(tx, outlineRow, outlineOf(ctx, planId));
    const orderOf = new Map(outline.map((s) => [s.stepId, s.stepOrder]));
    const conditions = (
      await tx
        .select()
        .from(planBranchingConditions)
        .where(
          and(
            eq(planBranchingConditions.planId, planId),
            eq(planBranchingConditions.tenantId, ctx.tenantId),
          ),
        )
        .orderBy(asc(planBranchingConditions.position))
    ).map((c) => ({
      conditionId: c.id,
      afterStepId: c.afterStepId,
      afterStepOrder: orderOf.get(c.afterStepId) ?? null,
      conditionExpression: c.conditionExpression,
      ifTrueAction: c.ifTrueAction,
      actionParams: c.actionParams,
      evaluatedAt: c.evaluatedAt ? c.evaluatedAt.toISOString() : null,
      fired: c.fired,
    }));
    const conditionsAfter = new Map<string, typeof conditions>();
    for (const condition of conditions) {
      const list = conditionsAfter.get(condition.afterStepId);
      if (list) list.push(condition);
      else conditionsAfter.set(condition.afterStepId, [condition]);
    }
    const stepsShown = stepsOrder.fitOf(
      await selectRows(tx, shownStepRow, shownStepsOf(ctx, planId, stepsOrder)),
      PLAN_PAGE_STEP_ROWS,
      PLAN_PAGE_STEP_BYTES,
      (step) => [step, conditionsAfter.get(step.stepId) ?? []],
    );
    const artifacts = await artifactSummaries(tx, ctx, planId, PLAN_PAGE_ARTIFACTS);
    // Who the team lets decide.
    const decisionPolicy = await readDecisionPolicy(tx, ctx.tenantId);
    // The trail in its chain's order. A row that lost its place (a null
    // chain_index, written past the check or from before it) is not listed:
    // the trail's check above names it.
    const where = and(
      eq(planAuditLog.planId, planId),
      eq(planAuditLog.tenantId, ctx.tenantId),
      isNotNull(planAuditLog.chainIndex),
    );
    const [total] = await tx.select({ n: count() }).from(planAuditLog).where(where);
    // A row's payload may hold a server step's resolved arguments (up to 200 KB):
    // it is read indented and cut, with the few facts the trail names beside it.
    const pretty = sql`jsonb_pretty(${planAuditLog.payload})`;
    const audit = auditPage.pageOf(
      await tx
        .select({
          id: planAuditLog.id,
          eventType: planAuditLog.eventType,
          actorType: planAuditLog.actorType,
          actorLabel: planAuditLog.actorLabel,
          stepId: planAuditLog.stepId,
          createdAt: planAuditLog.createdAt,
          action: sql<string | null>`${planAuditLog.payload} ->> 'action'`,
          decision: sql<string | null>`${planAuditLog.payload} ->> 'decision'`,
          channel: sql<string | null>`${planAuditLog.payload} ->> 'channel'`,
          text: sql<string>`left(${pretty}, ${sql.raw(String(PREVIEW_CHARS))})`,
          shortened: sql<boolean>`char_length(${pretty}) > ${sql.raw(String(PREVIEW_CHARS))}`,
          bytes: sql<number>`octet_length(${pretty})`,
          ...auditPage.position,
        })
        .from(planAuditLog)
        .where(and(where, auditPage.where))
        .orderBy(...auditPage.orderBy)
        .limit(AUDIT_PAGE_SIZE + 1),
      AUDIT_PAGE_SIZE,
    );
    const now = new Date();
    const summaries = await loadStepSummaries(tx, ctx, planId);
    const warnings = stallWarnings(summaries, now, stallClock(ctx));
    const sentBack = new Set(summaries.filter(isSentBack).map((s) => s.id));
    const steps = outline.map(({ argumentBindings, inputBindings, ...step }) => {
      const stepSentBack = sentBack.has(step.stepId);
      return {
        ...step,
        // A sent-back step starts again when an agent picks it up: until then
        // the page shows no start (the modify's own time is not one).
        startedAt: stepSentBack ? null : step.startedAt,
        /** Sent back to the agent with feedback, and not picked up again yet. */
        sentBack: stepSentBack,
      };
    });
    const stepOf = new Map(steps.map((step) => [step.stepId, step]));
    return {
      plan: planHeader(plan, await readForkLinks(tx, ctx, planId)),
      progress: computeProgress(summaries.map((s) => s.status)),
      steps,
      branchingConditions: conditions,
      pendingReview: await readPendingReviewRow(tx, ctx, planId),
      skillExecution: await loadExecution(tx, ctx, planId),
      deliverable: await loadContextDeliverable(tx, ctx, planId),
      evidence: await loadPlanEvidence(tx, ctx, planId, {
        ...evidenceCursors,
        pageBytes: PLAN_PAGE_EVIDENCE_BYTES,
      }),
      artifacts,
      // Shortened: ten of them at their longest, in quote marks, were a megabyte of HTML.
      feedback: (await loadFeedback(tx, ctx, planId)).map((item) => ({
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
        steps: stepsShown.items.flatMap(({ positionAt, positionId, ...shown }) => {
          // A step added since the outline was read waits for the next read.
          const step = stepOf.get(shown.stepId);
          return step ? [{ ...step, ...shown }] : [];
        }),
      },
      bindingEdges: bindingEdges(outline),
      stallWarnings: warnings,
      stallThresholdSeconds: ctx.stallThresholdSeconds,
      cancellation: plan.cancellation,
      /** A fired add_steps waits for the agent's steps: the plan is not running meanwhile. */
      awaitingSteps: plan.awaitingSteps
        ? {
            stepOrder: plan.awaitingSteps.stepOrder,
            condition: plan.awaitingSteps.conditionExpression,
          }
        : null,
      now: now.toISOString(),
      decisionPolicy,
      audit: {
        cursor: auditCursor ?? null,
        nextCursor: audit.nextCursor,
        total: total?.n ?? 0,
        entries: audit.items.map(
          ({ text, shortened, bytes, positionAt, positionId, ...entry }) => ({
            ...entry,
            /** The payload as indented JSON, shortened. */
            payload: { text, shortened, bytes } satisfies Shortened,
            createdAt: entry.createdAt.toISOString(),
          }),
        ),
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
    .where(and(eq(researchPlans.id, planId), sameTenant(researchPlans.tenantId, ctx.tenantId)));
  if (!plan) return undefined;
  return { planName: plan.name, deliverable: await loadLatestDeliverable(ctx.db, ctx, planId) };
}
