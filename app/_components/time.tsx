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

/** A duration in its two largest units, leaving out a zero second one ("30 min", not "30 min 0 s"). */
export function formatDuration(seconds: number): string {
  const total = Math.round(seconds);
  if (total < 60) return `${total} s`;
  const [major, majorUnit, minor, minorUnit] =
    total < 3600
      ? [Math.floor(total / 60), "min", total % 60, "s"]
      : [Math.floor(total / 3600), "h", Math.floor((total % 3600) / 60), "min"];
  return minor > 0 ? `${major} ${majorUnit} ${minor} ${minorUnit}` : `${major} ${majorUnit}`;
}
