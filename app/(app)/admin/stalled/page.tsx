import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { CancelPlanForm } from "@/app/_components/cancel-plan-form";
import { CursorRefused, oneParam, Pagination } from "@/app/_components/pagination";
import { PauseDetails, pauseHeadline } from "@/app/_components/pause-reason";
import { formatDuration, Time } from "@/app/_components/time";
import { requireAdmin } from "@/lib/auth/session";
import { env } from "@/lib/env";
import { isPlanStatus } from "@/lib/plan-engine/states";
import { isCursorRefused, orCursorRefused } from "@/lib/services/shared/pagination";
import type { StalledPlans } from "@/lib/services/views/stalled-plans";
import { views } from "@/lib/web/views";
import { RecoverForm } from "./recover-form";

export const metadata: Metadata = { title: "Stalled plans" };

const DONE = { fail_step: "Step failed", retry_step: "Step set back to pending" } as const;
export default async function StalledPage({
  searchParams,
}: {
  searchParams: Promise<{
    done?: string | string[];
    status?: string | string[];
    cursor?: string | string[];
  }>;
}) {
  const admin = await requireAdmin();
  const search = await searchParams;
  const listed = await orCursorRefused(views.stalledPlans(admin, oneParam(search.cursor)));
  if (isCursorRefused(listed)) {
    return (
      <section>
        <h1>Stalled plans</h1>
        <CursorRefused firstPage="/admin/stalled" />
      </section>
    );
  }
  const { stalled, paused, cursor, nextCursor } = listed;
  const done = oneParam(search.done);
  const status = oneParam(search.status);
  const doneText = done === "fail_step" || done === "retry_step" ? DONE[done] : null;
  return (
    <section>
      <h1>Stalled plans</h1>
      <p className="muted">Active plans that need a person before they can go on.</p>
      <Pagination
        cursor={cursor}
        nextCursor={nextCursor}
        basePath="/admin/stalled"
        params={{}}
        linkNames={{ first: "← Least recently active", next: "More plans →" }}
        label="Stalled plans pages"
        testId="stalled"
      >
        Least recently active first
      </Pagination>
      {doneText && status && isPlanStatus(status) ? (
        <p role="status" className="notice notice-success" data-testid="recovery-done">
          {doneText}; the plan is now {status.replace("_", " ")}.
        </p>
      ) : null}
      <section aria-labelledby="stuck-heading">
        <h2 id="stuck-heading">Stuck and failed steps</h2>
        <p className="muted">
          Active plans with a step in progress for longer than{" "}
          {formatDuration(env().CAIRN_STALL_THRESHOLD_SECONDS)} without its holder renewing it,
          marked stalled, holding a failed step, or waiting for the agent to add steps. Fail the
          stuck step so the plan moves on, retry a failed step, or cancel the plan.
        </p>
        {stalled.length === 0 ? (
          <p className="empty card">No stalled plans and no failed steps in active plans.</p>
        ) : (
          <ul className="cards">
            {stalled.map((plan) => (
              <PlanCard key={plan.planId} plan={plan} testId="stalled-plan" />
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="paused-heading">
        <h2 id="paused-heading">Paused plans</h2>
        <p className="muted">
          Plans whose next step Cairn runs itself could not run. The agent&apos;s next{" "}
          <code>get_next_step</code> answers with the same reason and the call that unblocks it; a
          step that failed can also be retried here.
        </p>
        {paused.length === 0 ? (
          <p className="empty card">No paused plans.</p>
        ) : (
          <ul className="cards">
            {paused.map((plan) => (
              <PlanCard key={plan.planId} plan={plan} testId="paused-plan">
                <p className="strong">{pauseHeadline(plan.pauseReason)}</p>
                <details>
                  <summary>Reason and the call that unblocks it</summary>
                  <PauseDetails reason={plan.pauseReason} />
                </details>
              </PlanCard>
            ))}
          </ul>
        )}
      </section>
    </section>
  );
}

/** A plan needing a person: `children` (its pause), then its stalled steps to fail and failed steps to retry. */
function PlanCard({
  plan,
  testId,
  children,
}: {
  plan: StalledPlans["stalled"][number];
  testId: string;
  children?: ReactNode;
}) {
  return (
    <li className="card" data-testid={testId}>
      <header className="step-header">
        <h3>
          <Link href={`/plans/${plan.planId}`}>{plan.name}</Link>
        </h3>
        <AttentionBadge plan={plan} paused={children !== undefined} />
      </header>
      <p className="muted">
        Last activity <Time iso={plan.lastActivityAt} />
      </p>
      {children}
      {plan.awaitingSteps ? (
        <p data-testid="awaiting-steps">
          Waiting for the agent to add steps: the condition “
          {plan.awaitingSteps.conditionExpression}” fired after step {plan.awaitingSteps.stepOrder}.
        </p>
      ) : null}
      <ul className="plain">
        {plan.stalledSteps.map((step) => (
          <li key={step.stepId}>
            Step {step.stepOrder} in progress for{" "}
            <strong>{formatDuration(step.inProgressSeconds)}</strong>, silent for{" "}
            <strong>{formatDuration(step.idleSeconds)}</strong>{" "}
            <RecoverForm
              planId={plan.planId}
              stepId={step.stepId}
              action="fail_step"
              label={`Fail step ${step.stepOrder}`}
              endsPlan={step.failEndsPlan}
            />
          </li>
        ))}
        {plan.failedSteps.map((step) => (
          <li key={step.stepId}>
            Step {step.stepOrder} failed
            {/* The paused step's failure is the pause reason already shown above. */}
            {step.stepId === plan.pauseReason?.stepId
              ? " (the reason above)"
              : step.failureReason
                ? `: ${step.failureReason}`
                : ""}{" "}
            <RecoverForm
              planId={plan.planId}
              stepId={step.stepId}
              action="retry_step"
              label={`Retry step ${step.stepOrder}`}
            />
          </li>
        ))}
      </ul>
      <CancelPlanForm planId={plan.planId} planName={plan.name} />
    </li>
  );
}

/**
 * Why the plan is on this page, not its status: a plan with a stuck or failed
 * step is usually still "executing", which under "Stalled" reads as a contradiction.
 */
function AttentionBadge({
  plan,
  paused,
}: {
  plan: StalledPlans["stalled"][number];
  paused: boolean;
}) {
  const [kind, label] = paused
    ? ["stalled", "Paused"]
    : plan.status === "stalled" || plan.stalledSteps.length > 0
      ? ["stalled", plan.stalledSteps.length > 0 ? "Step stuck" : "Stalled"]
      : plan.failedSteps.length > 0
        ? ["failed", "Step failed"]
        : ["awaiting_input", "Awaiting steps"];
  return (
    <span className={`badge badge-${kind}`} data-testid="attention">
      {label}
    </span>
  );
}
