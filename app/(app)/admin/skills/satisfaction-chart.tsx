type Point = { day: string; average: number; responses: number };

const WIDTH = 640;
const HEIGHT = 220;
const PAD = { left: 36, right: 12, top: 12, bottom: 36 };

/** Average satisfaction (1-5) per day of feedback, as a line with one dot per day. */
export function SatisfactionChart({ points }: { points: Point[] }) {
  if (points.length === 0) {
    return (
      <p className="muted">
        No feedback yet: it appears once agents call submit_research_feedback.
      </p>
    );
  }
  const x = (index: number) =>
    PAD.left +
    (points.length === 1
      ? (WIDTH - PAD.left - PAD.right) / 2
      : (index / (points.length - 1)) * (WIDTH - PAD.left - PAD.right));
  const y = (value: number) => PAD.top + ((5 - value) / 4) * (HEIGHT - PAD.top - PAD.bottom);
  const path = points.map((p, i) => `${i === 0 ? "M" : "L"} ${x(i)} ${y(p.average)}`).join(" ");
  return (
    <figure className="figure">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        width="100%"
        style={{ maxWidth: WIDTH }}
        role="img"
        aria-label={`Average satisfaction over ${points.length} day(s), latest ${points.at(-1)?.average.toFixed(1)} of 5`}
        data-testid="satisfaction-chart"
      >
        {[1, 2, 3, 4, 5].map((level) => (
          <g key={level}>
            <line
              x1={PAD.left}
              x2={WIDTH - PAD.right}
              y1={y(level)}
              y2={y(level)}
              className="chart-grid"
            />
            <text x={PAD.left - 8} y={y(level) + 4} textAnchor="end" className="chart-label">
              {level}
            </text>
          </g>
        ))}
        <path d={path} className="chart-line" fill="none" />
        {points.map((point, index) => (
          <circle key={point.day} cx={x(index)} cy={y(point.average)} r={4} className="chart-dot">
            {/* One string: several children are separate text nodes, which hydration (#418) trips on. */}
            <title>{`${point.day}: ${point.average.toFixed(2)} from ${point.responses} response(s)`}</title>
          </circle>
        ))}
        {points.length === 1 ? (
          // One day: its date once, under its dot.
          <text x={x(0)} y={HEIGHT - 10} textAnchor="middle" className="chart-label">
            {points[0]?.day}
          </text>
        ) : (
          <>
            <text x={PAD.left} y={HEIGHT - 10} className="chart-label">
              {points[0]?.day}
            </text>
            <text x={WIDTH - PAD.right} y={HEIGHT - 10} textAnchor="end" className="chart-label">
              {points.at(-1)?.day}
            </text>
          </>
        )}
      </svg>
      <figcaption className="muted">Average satisfaction (1–5) per day of feedback.</figcaption>
    </figure>
  );
}
