/**
 * Times are rendered on the server in UTC to the second (events of one minute
 * are told apart), with the exact instant in the tooltip.
 */
export function Time({ iso }: { iso: string | null }) {
  if (!iso) return <span className="muted">—</span>;
  const date = new Date(iso);
  const text = `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  return (
    <time dateTime={iso} title={iso}>
      {text}
    </time>
  );
}

export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(seconds / 3600);
  return `${hours} h ${Math.floor((seconds % 3600) / 60)} min`;
}
