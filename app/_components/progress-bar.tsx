import type { PlanProgress } from "@/lib/plan-engine/progress";

/**
 * The bar fills with the share of steps that are settled (done, skipped or
 * failed: what is left to do shrinks), but the words count only completed steps
 * as done; skipped and failed ones are named apart, so a rejected plan does not
 * read as two-thirds done.
 */
export function ProgressBar({ progress }: { progress: PlanProgress }) {
  const words = [
    `${progress.completed}/${progress.total} steps done`,
    progress.skipped > 0 ? `${progress.skipped} skipped` : undefined,
    progress.failed > 0 ? `${progress.failed} failed` : undefined,
  ]
    .filter(Boolean)
    .join(" · ");
  return (
    <div className="progress">
      <progress
        max={100}
        value={progress.percent}
        aria-label={`${progress.percent}% of the steps settled: ${words}`}
      />
      <span className="progress-text" data-testid="progress-text">
        {words}
      </span>
    </div>
  );
}
