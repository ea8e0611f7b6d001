import type { Metadata } from "next";
import Link from "next/link";
import { StatusBadge } from "@/app/_components/status-badge";
import { formatDuration, Time } from "@/app/_components/time";
import { requireAdmin } from "@/lib/auth/session";
import { env } from "@/lib/env";
import { views } from "@/lib/web/views";
import { RecoverForm } from "./recover-form";

export const metadata: Metadata = { title: "Stalled plans" };

const DONE = { fail_step: "Step failed", retry_step: "Step set back to pending" } as const;
const STATUSES = ["planning", "executing", "awaiting_review", "stalled", "completed", "failed"];

export default async function StalledPage({
  searchParams,
}: {
  searchParams: Promise<{ done?: string; status?: string }>;
}) {
  const admin = await requireAdmin();
  const plans = await views.stalledPlans(admin);
  const { done, status } = await searchParams;
  const doneText = done === "fail_step" || done === "retry_step" ? DONE[done] : null;
  return (
    <section>
      <h1>Stalled plans</h1>
      <p className="muted">
        Active plans with a step in progress for longer than{" "}
        {formatDuration(env().CAIRN_STALL_THRESHOLD_SECONDS)}, marked stalled, or holding a failed
        step. Fail the stuck step so the plan moves on, or retry a failed step.
      </p>
      {doneText && status && STATUSES.includes(status) ? (
        <p role="status" className="notice notice-success" data-testid="recovery-done">
          {doneText}; the plan is now {status.replace("_", " ")}.
        </p>
      ) : null}
      {plans.length === 0 ? (
        <p className="empty card">No stalled plans and no failed steps in active plans.</p>
      ) : (
        <ul className="cards">
          {plans.map((plan) => (
            <li key={plan.planId} className="card" data-testid="stalled-plan">
              <header className="step-header">
                <h2>
                  <Link href={`/plans/${plan.planId}`}>{plan.name}</Link>
                </h2>
                <StatusBadge status={plan.status} />
              </header>
              <p className="muted">
                Last activity <Time iso={plan.lastActivityAt} />
              </p>
              <ul className="plain">
                {plan.stalledSteps.map((step) => (
                  <li key={step.stepId}>
                    Step {step.stepOrder} in progress for{" "}
                    <strong>{formatDuration(step.inProgressSeconds)}</strong>{" "}
                    <RecoverForm
                      planId={plan.planId}
                      stepId={step.stepId}
                      action="fail_step"
                      label={`Fail step ${step.stepOrder}`}
                    />
                  </li>
                ))}
                {plan.failedSteps.map((step) => (
                  <li key={step.stepId}>
                    Step {step.stepOrder} failed
                    {step.failureReason ? `: ${step.failureReason}` : ""}{" "}
                    <RecoverForm
                      planId={plan.planId}
                      stepId={step.stepId}
                      action="retry_step"
                      label={`Retry step ${step.stepOrder}`}
                    />
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
