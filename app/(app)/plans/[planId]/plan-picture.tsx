import type { PlanPage } from "@/lib/services/plan-views";

type Step = PlanPage["steps"][number];
type Condition = PlanPage["branchingConditions"][number];

const NODE_H = 34;
const GAP = 18;
const NODE_W = 230;

/**
 * The plan as a flow: steps top to bottom, and each branching condition as an
 * arc from its step to where it leads (skip_to) or to a marker (fail, add_steps).
 * Drawn in SVG on the server; the step list below carries the same facts as text.
 */
export function PlanFlow({ steps, conditions }: { steps: Step[]; conditions: Condition[] }) {
  const y = (order: number) => (order - 1) * (NODE_H + GAP) + 10;
  const height = steps.length * (NODE_H + GAP) + 10;
  const width = NODE_W + 40 + Math.min(conditions.length, 8) * 22 + 60;
  const orderOfId = new Map(steps.map((s) => [s.stepId, s.stepOrder]));
  return (
    <figure className="figure">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width="100%"
        style={{ maxWidth: width }}
        role="img"
        aria-label={`Flow of ${steps.length} steps with ${conditions.length} branching conditions`}
      >
        {steps.slice(1).map((step) => (
          <line
            key={`edge-${step.stepId}`}
            x1={20 + NODE_W / 2}
            x2={20 + NODE_W / 2}
            y1={y(step.stepOrder - 1) + NODE_H}
            y2={y(step.stepOrder)}
            className="flow-edge"
          />
        ))}
        {conditions.map((condition, index) => {
          const from = condition.afterStepOrder ?? 1;
          const targetId =
            typeof condition.actionParams.stepId === "string"
              ? condition.actionParams.stepId
              : null;
          const to = targetId ? (orderOfId.get(targetId) ?? from) : from;
          const x = 20 + NODE_W + 14 + index * 22;
          const y1 = y(from) + NODE_H / 2;
          const y2 = condition.ifTrueAction === "skip_to" ? y(to) + NODE_H / 2 : y1 + 14;
          return (
            <g
              key={condition.conditionId}
              className={`flow-branch ${condition.fired ? "fired" : ""}`}
            >
              <title>
                After step {from}: if {condition.conditionExpression} then {condition.ifTrueAction}
                {condition.ifTrueAction === "skip_to" ? ` step ${to}` : ""}
                {condition.fired === null
                  ? " (not evaluated yet)"
                  : condition.fired
                    ? " (fired)"
                    : " (did not fire)"}
              </title>
              <path
                d={`M ${20 + NODE_W} ${y1} H ${x} V ${y2} H ${20 + NODE_W + 4}`}
                fill="none"
                markerEnd="url(#arrow)"
              />
              <text x={x + 4} y={(y1 + y2) / 2} className="flow-label">
                {condition.ifTrueAction === "skip_to" ? "skip" : condition.ifTrueAction}
              </text>
            </g>
          );
        })}
        {steps.map((step) => (
          <g key={step.stepId} className={`flow-node flow-${step.status}`}>
            <rect x={20} y={y(step.stepOrder)} width={NODE_W} height={NODE_H} rx={6} />
            <text x={30} y={y(step.stepOrder) + NODE_H / 2 + 5}>
              {step.stepOrder}. {step.stepType} · {step.status.replace("_", " ")}
            </text>
          </g>
        ))}
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="6"
            markerHeight="6"
            orient="auto"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" />
          </marker>
        </defs>
      </svg>
      <figcaption className="muted">
        Steps in order; arcs are branching conditions (solid when they fired).
      </figcaption>
    </figure>
  );
}

/** How long each step took, on one time axis from the plan's first start to now or its last finish. */
export function StepTimeline({ steps, now }: { steps: Step[]; now: string }) {
  const timed = steps.filter((s) => s.startedAt);
  if (timed.length === 0) return <p className="muted">No step has started yet.</p>;
  const start = Math.min(...timed.map((s) => Date.parse(s.startedAt as string)));
  const end = Math.max(
    ...timed.map((s) => (s.completedAt ? Date.parse(s.completedAt) : Date.parse(now))),
  );
  const span = Math.max(1, end - start);
  return (
    <ol className="timeline" aria-label="Step durations">
      {timed.map((step) => {
        const from = Date.parse(step.startedAt as string);
        const to = step.completedAt ? Date.parse(step.completedAt) : Date.parse(now);
        const seconds = Math.max(0, (to - from) / 1000);
        return (
          <li key={step.stepId}>
            <span className="timeline-label">
              {step.stepOrder}. {step.stepType}
            </span>
            <span className="timeline-track">
              <span
                className={`timeline-bar flow-${step.status}`}
                style={{
                  marginLeft: `${((from - start) / span) * 100}%`,
                  width: `${Math.max(1, ((to - from) / span) * 100)}%`,
                }}
              />
            </span>
            <span className="timeline-value">
              {seconds < 60 ? `${seconds.toFixed(1)} s` : `${(seconds / 60).toFixed(1)} min`}
              {step.completedAt ? "" : " (running)"}
            </span>
          </li>
        );
      })}
    </ol>
  );
}
