import { CancelPlanForm } from "@/app/_components/cancel-plan-form";
import { PauseDetails, pauseHeadline } from "@/app/_components/pause-reason";
import { formatDuration, Time } from "@/app/_components/time";
import { isTerminalPlanStatus } from "@/lib/plan-engine/transitions";
import type { PlanPage } from "@/lib/services/views/plan-page";

/**
 * What holds the plan up (a pause of a server-run step, steps whose holders
 * stopped renewing them) or ended it (a cancel: who and why), and the Cancel
 * form while the plan is unfinished.
 */
export function PlanNotices({ page }: { page: PlanPage }) {
  const ended = isTerminalPlanStatus(page.plan.status);
  // A pause only holds up a plan that can still go on.
  const pause = ended ? null : page.plan.pauseReason;
  return (
    <>
      {page.cancellation ? (
        <p className="notice" role="status" data-testid="plan-cancelled">
          Cancelled by {page.cancellation.by} <Time iso={page.cancellation.at} />:{" "}
          {page.cancellation.reason}
        </p>
      ) : null}
      {pause ? (
        <section
          className="notice notice-warning pause"
          role="status"
          aria-labelledby="pause-heading"
          data-testid="plan-pause"
        >
          <h2 id="pause-heading">
            Paused at <a href={`#step-${pause.stepOrder}`}>step {pause.stepOrder}</a>
          </h2>
          <p className="strong">{pauseHeadline(pause)}</p>
          <PauseDetails reason={pause} />
        </section>
      ) : null}

      {page.stallWarnings.length > 0 ? (
        <p className="notice notice-warning" role="status" data-testid="plan-stall-warning">
          ⚠ Stalled: step {page.stallWarnings.map((w) => w.stepOrder).join(", ")} has been in
          progress and its holder has not renewed it within the{" "}
          {formatDuration(page.stallThresholdSeconds)} threshold.
        </p>
      ) : null}
      {ended ? null : <CancelPlanForm planId={page.plan.planId} planName={page.plan.name} />}
    </>
  );
}
