import { PauseDetails, pauseHeadline } from "@/app/_components/pause-reason";
import { formatDuration } from "@/app/_components/time";
import { isTerminalPlanStatus } from "@/lib/plan-engine/transitions";
import type { PlanPage } from "@/lib/services/views/plan-views";

/** What holds the plan up: a pause of a server-run step, steps in progress past the stall threshold. */
export function PlanNotices({ page }: { page: PlanPage }) {
  // A pause only holds up a plan that can still go on.
  const pause = isTerminalPlanStatus(page.plan.status) ? null : page.plan.pauseReason;
  return (
    <>
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
          progress longer than the {formatDuration(page.stallThresholdSeconds)} threshold.
        </p>
      ) : null}
    </>
  );
}
