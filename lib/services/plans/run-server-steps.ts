/**
 * Server-run steps (docs/protocol.md, "Server-run steps"): get_next_step runs every
 * server step that is next in line, in order, inside its transaction with the
 * plan row locked exclusively, so two callers never run one step twice. Each
 * step's bindings are resolved by the engine, the tool runs as "Cairn", and its
 * completion is decided by the engine exactly as a submit would be (branching
 * conditions included). Results stay in memory until the run ends; then one
 * statement writes every step, verdict, skip, the plan and the audit rows.
 *
 * A step that cannot run stops the run with a pause reason naming the call
 * that unblocks it; a step whose binding waits for an earlier step still in
 * progress stops it without a pause.
 */
import "server-only";
import { z } from "zod";
import type { Database, Transaction } from "../../db/client";
import { jsonParam, run, statement } from "../../db/statement";
import { AppError } from "../../plan-engine/app-error";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import {
  type BindingSource,
  classifyUnresolved,
  MAX_RESOLVED_BYTES,
  type PauseReason,
  resolveBindings,
} from "../../plan-engine/bindings";
import { firstClaimable } from "../../plan-engine/claims";
import type { PlanSnapshot } from "../../plan-engine/plan-snapshot";
import { planStatusAfter } from "../../plan-engine/plan-status";
import type { PlanStatus, StepStatus } from "../../plan-engine/states";
import { decideSubmit } from "../../plan-engine/submit";
import { isTerminalPlanStatus } from "../../plan-engine/transitions";
import {
  completionAuditInsert,
  completionEffectsCtes,
  effectsParams,
} from "../loop/completion-effects";
import {
  conditionsAfter,
  type RunStep,
  readRunSnapshot,
  withBoundResults,
} from "../loop/read-plan-snapshot";
import { compileSchema, describeErrors } from "../research/extract-data";
import type { ServiceContext } from "../shared/context";
import { jsonBytes } from "../shared/fields";
import type { PlanRow } from "../shared/plan-access";
import { recordRevision } from "../shared/revisions";
import { isServerStepTool, SERVER_STEP_TOOLS } from "../shared/server-step-tools";

export type ServerStepRun = {
  stepId: string;
  stepOrder: number;
  tool: string;
  status: "completed" | "failed";
};

export type ServerRunOutcome = {
  ran: ServerStepRun[];
  pause: PauseReason | null;
  /** A server step next in line that waits for an earlier step still in progress. */
  waiting: { stepOrder: number; onStepOrder: number } | null;
  /** A fired add_steps the plan now waits on: no further step runs or is handed out. */
  awaitingSteps: PlanSnapshot["awaitingSteps"];
  planStatus: PlanStatus;
  /**
   * The plan's steps as the run leaves them, results included: the step handed
   * out next has its inputs resolved from these, without reading the steps
   * again. None on the pause of a tool error, which hands nothing out.
   */
  bindingSource?: BindingSource;
};

type StepWrite = {
  id: string;
  status: StepStatus;
  result: unknown;
  failureReason: string | null;
};

/** The plan's steps by order with their status and result, as bindings read them. */
function bindingSourceOf(
  researchQuestion: string,
  steps: readonly Pick<RunStep, "id" | "stepOrder" | "status" | "result" | "tool">[],
): BindingSource {
  return {
    researchQuestion,
    steps: new Map(
      steps.map((s) => [
        s.stepOrder,
        { stepId: s.id, status: s.status, result: s.result, tool: s.tool },
      ]),
    ),
  };
}

function errorOf(error: unknown): { code: string; message: string } {
  if (error instanceof AppError) return { code: error.code, message: error.message };
  return {
    code: "INTERNAL_ERROR",
    message: error instanceof Error ? error.message : String(error),
  };
}

export async function runServerSteps(
  tx: Transaction,
  ctx: ServiceContext,
  plan: PlanRow,
): Promise<ServerRunOutcome> {
  const stored = plan.pauseReason;
  const read = await readRunSnapshot(tx, ctx.tenantId, plan.id);
  // A tool error leaves its step failed; the plan stays paused on it until the
  // step moves on (retry_step, or the suggested call), whatever comes after:
  // nothing runs or is handed out, so no result is read (an agent polls it).
  if (stored?.type === "tool_error") {
    const paused = read.steps.find((s) => s.id === stored.stepId);
    if (paused?.status === "failed") {
      return {
        ran: [],
        pause: stored,
        waiting: null,
        planStatus: plan.status,
        awaitingSteps: plan.awaitingSteps,
      };
    }
  }
  const steps = await withBoundResults(tx, ctx.tenantId, plan.id, read.steps);

  const cairn: ServiceContext = {
    ...ctx,
    // Tools that open a transaction get a savepoint of this one.
    db: tx as unknown as Database,
    actor: { type: "system", id: null, label: "Cairn (server-run step)" },
  };
  let snapshot: PlanSnapshot = {
    id: plan.id,
    status: plan.status,
    awaitingSteps: plan.awaitingSteps,
    steps: steps.map((s) => ({
      id: s.id,
      stepOrder: s.stepOrder,
      status: s.status,
      stepType: s.stepType,
    })),
    pendingReviews: read.pendingReviews,
  };
  const writes = new Map<string, StepWrite>();
  const verdicts: { id: string; fired: boolean }[] = [];
  const skipped: string[] = [];
  const withdrawn: string[] = [];
  const audit: AuditEntry[] = [];
  const ran: ServerStepRun[] = [];
  let pause: PauseReason | null = null;
  let waiting: ServerRunOutcome["waiting"] = null;
  const now = new Date();

  const resultOf = (row: RunStep) => (writes.has(row.id) ? writes.get(row.id)?.result : row.result);
  // Each step's status by id, so a pass is linear in the plan's steps (a
  // search per step made each pass quadratic, and a run of 200 steps cubic).
  const stepsNow = () => {
    const statusOf = new Map(snapshot.steps.map((s) => [s.id, s.status]));
    return steps.map((s) => ({
      ...s,
      status: statusOf.get(s.id) ?? "pending",
      result: resultOf(s),
    }));
  };

  for (;;) {
    // A fired add_steps holds the steps after it, Cairn's own too.
    if (isTerminalPlanStatus(snapshot.status) || snapshot.awaitingSteps) break;
    const current = stepsNow();
    const next = firstClaimable(current, now);
    if (!next?.tool || !isServerStepTool(next.tool)) break;
    const tool = SERVER_STEP_TOOLS[next.tool];
    const resolved = resolveBindings(
      next.arguments ?? {},
      bindingSourceOf(plan.researchQuestion, current),
    );
    const args = (resolved.value ?? {}) as Record<string, unknown>;
    const stepRef = { stepId: next.id, stepOrder: next.stepOrder, tool: next.tool };
    const notYet = resolved.unresolved.filter((u) => u.reason === "not_completed");
    if (resolved.unresolved.length > 0 && notYet.length === resolved.unresolved.length) {
      waiting = { stepOrder: next.stepOrder, onStepOrder: notYet[0]?.producingStepOrder ?? 0 };
      break;
    }
    // In UTF-8 bytes, as the answer carries them (a string's length counts UTF-16 units).
    const oversized = (jsonBytes(args) ?? 0) > MAX_RESOLVED_BYTES;
    if (resolved.unresolved.length > 0) {
      // The pause is stored on the plan and answered by every get_next_step and
      // get_plan_status: arguments past the limit once bound are suggested as written.
      const suggested = oversized ? (next.arguments ?? {}) : args;
      pause = classifyUnresolved(stepRef, plan.id, suggested, resolved.unresolved);
      break;
    }
    if (oversized) {
      pause = {
        type: "schema_mismatch",
        ...stepRef,
        issues: [
          { path: "arguments", message: `larger than ${MAX_RESOLVED_BYTES} bytes once bound` },
        ],
        message: `Step ${next.stepOrder}'s arguments are larger than ${MAX_RESOLVED_BYTES} bytes once their bindings are resolved. Call ${next.tool} yourself with a smaller input (completesStep links the result to the step).`,
        suggestedTool: {
          name: next.tool,
          arguments: { completesStep: { planId: plan.id, stepId: next.id } },
        },
      };
      break;
    }
    // An artifact a plan stores belongs to the plan and its step unless the
    // arguments say otherwise, as when the agent stores one during a step.
    if (next.tool === "store_research" && args.planId === undefined) {
      Object.assign(args, { planId: plan.id, stepId: args.stepId ?? next.id });
    }
    const parsed = tool.input.safeParse(args);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: i.path.map(String).join(".") || "(arguments)",
        message: i.message,
      }));
      pause = {
        type: "schema_mismatch",
        ...stepRef,
        issues,
        message: `Step ${next.stepOrder}'s arguments, once bound, do not fit ${next.tool}: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}. Call ${next.tool} yourself with corrected arguments (completesStep links the result to the step).`,
        suggestedTool: {
          name: next.tool,
          arguments: { ...args, completesStep: { planId: plan.id, stepId: next.id } },
        },
      };
      break;
    }
    let result: Record<string, unknown>;
    try {
      result = (await tool.run(cairn, parsed.data as never)) as Record<string, unknown>;
    } catch (error) {
      const { code, message } = errorOf(error);
      const retryable = tool.retryable(code);
      writes.set(next.id, {
        id: next.id,
        status: "failed",
        result: { error: { code, message } },
        failureReason: `${next.tool} failed: ${code}: ${message}`,
      });
      snapshot = {
        ...snapshot,
        steps: snapshot.steps.map((s) => (s.id === next.id ? { ...s, status: "failed" } : s)),
      };
      audit.push(
        {
          eventType: "step_started",
          planId: plan.id,
          stepId: next.id,
          payload: {
            stepOrder: next.stepOrder,
            planStatusBefore: snapshot.status,
            attempt: 1,
            tool: next.tool,
            arguments: args,
          },
        },
        {
          eventType: "step_failed",
          planId: plan.id,
          stepId: next.id,
          payload: {
            stepOrder: next.stepOrder,
            reason: `${code}: ${message}`,
            source: "server_tool",
            tool: next.tool,
            errorCode: code,
          },
        },
      );
      ran.push({ ...stepRef, status: "failed" });
      pause = {
        type: "tool_error",
        ...stepRef,
        errorCode: code,
        retryable,
        message: `Step ${next.stepOrder} (${next.tool}) failed: ${code}: ${message.replace(/\.$/, "")}. ${retryable ? "Calling it again may help: retry the step with modify_plan retry_step, then get_next_step." : `Calling it again will fail the same way: do the step yourself and give its result with submit_step_result (or call ${next.tool} with completesStep once what was wrong is fixed).`}`,
        suggestedTool: retryable
          ? {
              name: "modify_plan",
              arguments: {
                planId: plan.id,
                action: "retry_step",
                stepId: next.id,
                modificationRationale: `Retry ${next.tool} after ${code}.`,
              },
            }
          : {
              name: "submit_step_result",
              arguments: {
                planId: plan.id,
                stepId: next.id,
                result: {},
                stepExecutionReport: {
                  thinking: `Did step ${next.stepOrder} myself after ${next.tool} failed with ${code}.`,
                  webSearches: [],
                  webFetches: [],
                  otherToolCalls: [],
                  subagents: [],
                },
              },
            },
      };
      break;
    }
    if (next.outputSchema) {
      const validate = compileSchema(next.outputSchema);
      if (!validate(result)) {
        const detail = describeErrors(validate);
        pause = {
          type: "schema_mismatch",
          ...stepRef,
          issues: [{ path: "result", message: detail }],
          message: `Step ${next.stepOrder}'s ${next.tool} result does not satisfy its outputSchema: ${detail}. Submit a result that does with submit_step_result (the tool's result is in suggestedTool.arguments.result).`,
          suggestedTool: {
            name: "submit_step_result",
            arguments: { planId: plan.id, stepId: next.id, result },
          },
        };
        break;
      }
    }
    const decided = decideSubmit(snapshot, conditionsAfter(read, next.id), {
      stepId: next.id,
      result,
      resultSummary: null,
      confidence: null,
    });
    writes.set(next.id, { id: next.id, status: "completed", result, failureReason: null });
    snapshot = {
      ...snapshot,
      status: decided.planStatus,
      awaitingSteps: decided.awaitingSteps,
      pendingReviews: snapshot.pendingReviews.filter(
        (r) => !decided.withdrawnReviewIds.includes(r.id),
      ),
      steps: snapshot.steps.map((s) =>
        s.id === next.id
          ? { ...s, status: "completed" }
          : decided.skippedStepIds.includes(s.id)
            ? { ...s, status: "skipped" }
            : s,
      ),
    };
    verdicts.push(...decided.verdicts);
    skipped.push(...decided.skippedStepIds);
    withdrawn.push(...decided.withdrawnReviewIds);
    audit.push(
      ...decided.audit.map((entry): AuditEntry => {
        if (entry.eventType === "step_started") {
          return {
            ...entry,
            payload: { ...entry.payload, tool: next.tool ?? "", arguments: args },
          };
        }
        if (entry.eventType === "step_completed") {
          return { ...entry, payload: { ...entry.payload, tool: next.tool ?? "" } };
        }
        return entry;
      }),
    );
    ran.push({ ...stepRef, status: "completed" });
  }

  // A plan whose first steps Cairn ran (or tried to) is executing, as after a hand-out.
  if ((ran.length > 0 || pause) && !isTerminalPlanStatus(snapshot.status)) {
    const derived = snapshot.status === "awaiting_review" ? snapshot.status : "executing";
    snapshot = { ...snapshot, status: planStatusAfter(snapshot.status, derived) };
  }
  const pauseChanged = JSON.stringify(pause) !== JSON.stringify(stored ?? null);
  if (ran.length > 0 || pauseChanged) {
    await writeRun(tx, cairn, plan, {
      steps: [...writes.values()],
      verdicts,
      skipped,
      withdrawn,
      planStatus: snapshot.status,
      awaitingSteps: snapshot.awaitingSteps,
      pause,
      audit,
      now: now.toISOString(),
    });
  }
  return {
    ran,
    pause,
    waiting,
    planStatus: snapshot.status,
    awaitingSteps: snapshot.awaitingSteps,
    bindingSource: bindingSourceOf(plan.researchQuestion, stepsNow()),
  };
}

/**
 * The run's one write: the completion's effects (verdicts, skips, withdrawals,
 * the plan with its pause), the audit rows, and every step the run moved, each
 * with its run's `step_started` row (`last_run_audit_id`, the arguments the
 * plan page shows), joined by step rather than searched for.
 */
const writeRunStatement = statement(
  "write a run of server steps",
  `with ${completionEffectsCtes}, audit_rows as (
    ${completionAuditInsert} returning id, step_id, event_type
  )
  update plan_step set status = w.status, result = w.result,
    failure_reason = w."failureReason",
    started_at = $3::timestamptz, completed_at = $3::timestamptz,
    attempt = plan_step.attempt + 1, updated_at = $3::timestamptz,
    last_run_audit_id = coalesce(started.id, plan_step.last_run_audit_id)
  from jsonb_to_recordset($12::jsonb)
      as w(id uuid, status step_status, result jsonb, "failureReason" text)
    left join audit_rows started
      on started.step_id = w.id and started.event_type = 'step_started'
  where plan_step.id = w.id`,
  z.unknown(),
);

async function writeRun(
  tx: Transaction,
  ctx: ServiceContext,
  plan: PlanRow,
  write: {
    steps: StepWrite[];
    verdicts: { id: string; fired: boolean }[];
    skipped: string[];
    withdrawn: string[];
    planStatus: PlanStatus;
    awaitingSteps: PlanSnapshot["awaitingSteps"];
    pause: PauseReason | null;
    audit: AuditEntry[];
    now: string;
  },
): Promise<void> {
  // jsonb_to_recordset reads the camelCase key as its own column name.
  await run(tx, writeRunStatement, [
    ...effectsParams(
      ctx,
      plan.id,
      null,
      {
        verdicts: write.verdicts,
        skippedStepIds: write.skipped,
        withdrawnReviewIds: write.withdrawn,
        planStatus: write.planStatus,
        awaitingSteps: write.awaitingSteps,
        audit: write.audit,
      },
      write.now,
      { reason: write.pause },
    ),
    jsonParam(write.steps),
  ]);
  await recordRevision(tx, ctx, write.audit);
}
