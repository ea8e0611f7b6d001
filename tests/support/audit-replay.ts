/**
 * Replays a plan's audit trail against the step state machine and compares the
 * outcome with the stored steps: every transition must have its row, and every
 * row must be a valid transition. Used by the engine's property test (on the
 * engine's own audit entries) and by the integration tests (on the rows the
 * server wrote), so "audit rows = transitions" is one definition.
 */
import { asc, eq } from "drizzle-orm";
import type { Database } from "@/lib/db/client";
import { planAuditLog, planSteps, researchPlans } from "@/lib/db/schema";
import type { StepStatus } from "@/lib/plan-engine/states";
import { canTransitionStep } from "@/lib/plan-engine/transitions";

export type ReplayRow = {
  eventType: string;
  stepId: string | null;
  payload: Record<string, unknown>;
};

/** Problems found; empty when the trail and the steps agree. */
export function replayAudit(
  steps: readonly { id: string; status: StepStatus }[],
  rows: readonly ReplayRow[],
): string[] {
  const problems: string[] = [];
  const state = new Map<string, StepStatus>();
  const removed = new Set<string>();
  const move = (stepId: string | null, to: StepStatus, why: string) => {
    if (!stepId) {
      problems.push(`${why}: no step id`);
      return;
    }
    const from = state.get(stepId) ?? "pending";
    if (!canTransitionStep(from, to)) problems.push(`${why}: ${stepId} ${from} -> ${to}`);
    state.set(stepId, to);
  };
  for (const [index, row] of rows.entries()) {
    const why = `row ${index} ${row.eventType}${typeof row.payload.action === "string" ? `/${row.payload.action}` : ""}`;
    const { payload } = row;
    switch (row.eventType) {
      case "step_started": {
        const from = state.get(row.stepId ?? "") ?? "pending";
        if (payload.reissued !== undefined) {
          // A hand-out again of a step nobody finished: no state change.
          if (from !== "in_progress") problems.push(`${why}: reissued a ${from} step`);
          if (typeof payload.attempt !== "number" || payload.attempt < 2) {
            problems.push(`${why}: a reissue must be attempt 2 or more`);
          }
        } else {
          move(row.stepId, "in_progress", why);
        }
        break;
      }
      case "step_completed":
        move(row.stepId, "completed", why);
        break;
      case "step_failed": {
        // fail_step fails a pending step through in_progress in one call.
        if ((state.get(row.stepId ?? "") ?? "pending") === "pending") {
          move(row.stepId, "in_progress", why);
        }
        move(row.stepId, "failed", why);
        break;
      }
      case "user_reviewed":
        if (payload.action === "review_requested") move(row.stepId, "awaiting_input", why);
        else if (payload.action === "decision") {
          const to: Record<string, StepStatus | undefined> = {
            approve: "completed",
            modify: "in_progress",
            skip: "skipped",
            // reject: its step_failed row is the transition.
          };
          const target = to[String(payload.decision)];
          if (target) move(row.stepId, target, why);
        }
        break;
      case "plan_modified":
        if (payload.action === "branch_skipped_steps") {
          for (const id of (payload.skippedStepIds as string[]) ?? []) move(id, "skipped", why);
        } else if (payload.action === "retry_step") {
          move(row.stepId, "pending", why);
        } else if (payload.action === "remove_step") {
          removed.add(String(payload.removedStepId));
        } else if (payload.action === "forked") {
          // A fork's carried steps arrive settled, as they were in its source: no transition.
          const carried = (payload.carriedSteps ?? []) as { stepId: string; status: StepStatus }[];
          for (const { stepId, status } of carried) state.set(stepId, status);
        }
        break;
      default:
        break;
    }
  }
  for (const step of steps) {
    const replayed = state.get(step.id) ?? "pending";
    if (replayed !== step.status) {
      problems.push(`step ${step.id}: stored ${step.status}, audit trail says ${replayed}`);
    }
  }
  for (const id of state.keys()) {
    if (!removed.has(id) && !steps.some((s) => s.id === id)) {
      problems.push(`audit rows name step ${id}, which the plan does not have`);
    }
  }
  return problems;
}

/**
 * `replayAudit` for every plan stored in a database (or the ones named): the
 * problems per plan id, only for plans that have any, so `{}` means every
 * trail matches its steps.
 */
export async function storedAuditProblems(
  db: Database,
  planIds?: readonly string[],
): Promise<Record<string, string[]>> {
  const ids =
    planIds ?? (await db.select({ id: researchPlans.id }).from(researchPlans)).map((p) => p.id);
  const problems: Record<string, string[]> = {};
  for (const planId of ids) {
    const steps = await db
      .select({ id: planSteps.id, status: planSteps.status })
      .from(planSteps)
      .where(eq(planSteps.planId, planId));
    const rows = await db
      .select({
        eventType: planAuditLog.eventType,
        stepId: planAuditLog.stepId,
        payload: planAuditLog.payload,
      })
      .from(planAuditLog)
      .where(eq(planAuditLog.planId, planId))
      .orderBy(asc(planAuditLog.seq));
    const found = replayAudit(steps, rows);
    if (found.length > 0) problems[planId] = found;
  }
  return problems;
}
