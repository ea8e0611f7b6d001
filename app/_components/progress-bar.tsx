import type { PlanProgress } from "@/lib/plan-engine/progress";

export function ProgressBar({ progress }: { progress: PlanProgress }) {
  const done = progress.completed + progress.skipped + progress.failed;
  return (
    <div className="progress">
      <progress
        max={100}
        value={progress.percent}
        aria-label={`${progress.percent}% done: ${done} of ${progress.total} steps finished`}
      />
      <span className="progress-text">
        {progress.percent}% · {done}/{progress.total} steps
        {progress.failed > 0 ? ` · ${progress.failed} failed` : ""}
      </span>
    </div>
  );
}
