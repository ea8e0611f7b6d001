const LABELS: Record<string, string> = {
  planning: "Planning",
  executing: "Executing",
  awaiting_review: "Awaiting review",
  stalled: "Stalled",
  completed: "Completed",
  failed: "Failed",
  cancelled: "Cancelled",
  pending: "Pending",
  in_progress: "In progress",
  awaiting_input: "Awaiting input",
  skipped: "Skipped",
  started: "Started",
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid="status">
      {LABELS[status] ?? status}
    </span>
  );
}
