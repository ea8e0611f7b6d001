import { shorten } from "@/lib/services/views/full-values";
import type { BindingEdge, PlanPage } from "@/lib/services/views/plan-page";

type Step = PlanPage["steps"][number];
type Condition = PlanPage["branchingConditions"][number];

const NODE_H = 34;
const GAP = 18;
const NODE_W = 230;
/** Binding arcs run in lanes left of the steps; past this many, they share lanes. */
const BINDING_LANES = 8;
const LANE_W = 14;
/** A text row of the 12px flow labels. */
const LABEL_ROW = 14;

function bindingText(edge: BindingEdge): string {
  return `Step ${edge.fromStepOrder}'s result feeds step ${edge.toStepOrder}'s ${edge.field}: ${edge.bindings.join(", ")}`;
}

/**
 * How much of a condition its tooltip shows: the diagram draws every condition
 * of the plan (200 of 500 characters would be most of a megabyte of the page);
 * the Steps section shows each whole.
 */
const TOOLTIP_CONDITION_CHARS = 80;

/*
 * An SVG <title> gets its text as one string: several JSX children render as
 * separate text nodes, which the server and the client do not agree on
 * (React's hydration error #418).
 */
function conditionText(condition: Condition, from: number, to: number): string {
  const expression = shorten(condition.conditionExpression, TOOLTIP_CONDITION_CHARS);
  const target = condition.ifTrueAction === "skip_to" ? ` step ${to}` : "";
  const outcome =
    condition.fired === null
      ? " (not evaluated yet)"
      : condition.fired
        ? " (fired)"
        : " (did not fire)";
  return `After step ${from}: if ${expression.text}${expression.shortened ? "…" : ""} then ${condition.ifTrueAction}${target}${outcome}`;
}

/** A step's status as the flow says it: a step sent back by a person's modify waits, as in the step list. */
function statusText(step: Step): string {
  return step.sentBack ? "sent back" : step.status.replace("_", " ");
}

function stepText(step: Step): string {
  const tool = step.tool ? `, run by Cairn with ${step.tool}` : "";
  return `Step ${step.stepOrder} (${step.stepType}${tool}): ${statusText(step)}`;
}

/**
 * The plan as a flow: steps top to bottom (Cairn's own steps outlined dashed),
 * each branching condition as an arc on the right from its step to where it
 * leads (skip_to) or to a marker (fail, add_steps), and each binding as a
 * dotted arc on the left from the step whose result it reads to the step that
 * reads it. Drawn in SVG on the server; the step list below carries the same
 * facts as text, and the bindings are also listed for screen readers.
 */
export function PlanFlow({
  steps,
  conditions,
  bindings,
}: {
  steps: Step[];
  conditions: Condition[];
  bindings: BindingEdge[];
}) {
  const left = 20 + Math.min(bindings.length, BINDING_LANES) * LANE_W;
  const y = (order: number) => (order - 1) * (NODE_H + GAP) + 10;
  // Each condition's row among the conditions after the same step.
  const seen = new Map<number, number>();
  const rowOf = conditions.map((condition) => {
    const from = condition.afterStepOrder ?? 1;
    const row = seen.get(from) ?? 0;
    seen.set(from, row + 1);
    return row;
  });
  const height = steps.length * (NODE_H + GAP) + 10 + Math.max(0, ...rowOf) * LABEL_ROW;
  const width = left + NODE_W + 40 + Math.min(conditions.length, 8) * 22 + 60;
  const orderOfId = new Map(steps.map((s) => [s.stepId, s.stepOrder]));
  // Shorter bindings take the lanes nearer the steps, so arcs nest instead of crossing.
  const span = (edge: BindingEdge) => edge.toStepOrder - edge.fromStepOrder;
  const laidOut = [...bindings].sort((a, b) => span(a) - span(b));
  return (
    <figure className="figure">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width="100%"
        style={{ maxWidth: width }}
        role="img"
        aria-label={`Flow of ${steps.length} steps with ${conditions.length} branching conditions and ${bindings.length} bindings between steps`}
      >
        {steps.slice(1).map((step) => (
          <line
            key={`edge-${step.stepId}`}
            x1={left + NODE_W / 2}
            x2={left + NODE_W / 2}
            y1={y(step.stepOrder - 1) + NODE_H}
            y2={y(step.stepOrder)}
            className="flow-edge"
          />
        ))}
        {laidOut.map((edge, index) => {
          const x = left - 8 - (index % BINDING_LANES) * LANE_W;
          // Out of a step's upper half, into the lower half, so a step that both
          // reads and feeds shows which is which.
          const y1 = y(edge.fromStepOrder) + NODE_H / 3;
          const y2 = y(edge.toStepOrder) + (NODE_H * 2) / 3;
          return (
            <g
              key={`${edge.fromStepId}-${edge.toStepId}-${edge.field}`}
              className="flow-binding"
              data-testid="binding-edge"
              data-from={edge.fromStepOrder}
              data-to={edge.toStepOrder}
            >
              <title>{bindingText(edge)}</title>
              <path
                d={`M ${left} ${y1} H ${x} V ${y2} H ${left - 2}`}
                fill="none"
                markerEnd="url(#binding-arrow)"
              />
            </g>
          );
        })}
        {conditions.map((condition, index) => {
          const from = condition.afterStepOrder ?? 1;
          const targetId =
            typeof condition.actionParams.stepId === "string"
              ? condition.actionParams.stepId
              : null;
          const to = targetId ? (orderOfId.get(targetId) ?? from) : from;
          const x = left + NODE_W + 14 + index * 22;
          const y1 = y(from) + NODE_H / 2;
          // A step's second, third… condition takes the next text row down, so
          // labels in neighbouring lanes ("fail", "add_steps") do not overlap.
          const row = rowOf[index] ?? 0;
          const y2 =
            condition.ifTrueAction === "skip_to" ? y(to) + NODE_H / 2 : y1 + 14 + row * LABEL_ROW;
          const labelY =
            condition.ifTrueAction === "skip_to" ? (y1 + y2) / 2 + row * LABEL_ROW : y2 + 4;
          return (
            <g
              key={condition.conditionId}
              className={`flow-branch ${condition.fired ? "fired" : ""}`}
            >
              <title>{conditionText(condition, from, to)}</title>
              <path
                d={`M ${left + NODE_W} ${y1} H ${x} V ${y2} H ${left + NODE_W + 4}`}
                fill="none"
                markerEnd="url(#arrow)"
              />
              <text x={x + 4} y={labelY} className="flow-label">
                {condition.ifTrueAction === "skip_to" ? "skip" : condition.ifTrueAction}
              </text>
            </g>
          );
        })}
        {steps.map((step) => (
          <g
            key={step.stepId}
            className={`flow-node flow-${step.sentBack ? "pending" : step.status}${step.tool ? " flow-server" : ""}`}
          >
            <title>{stepText(step)}</title>
            <rect x={left} y={y(step.stepOrder)} width={NODE_W} height={NODE_H} rx={6} />
            <text x={left + 10} y={y(step.stepOrder) + NODE_H / 2 + 5}>
              {/* A server step is named by its tool, which says more than its type. */}
              {step.stepOrder}. {step.tool ?? step.stepType} · {statusText(step)}
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
          <marker
            id="binding-arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="6"
            markerHeight="6"
            orient="auto"
            className="flow-binding-arrow"
          >
            <path d="M 0 0 L 10 5 L 0 10 z" />
          </marker>
        </defs>
      </svg>
      <figcaption className="muted">
        <ul className="flow-legend">
          <li>
            <Swatch kind="server" /> steps in order; dashed outline: run by Cairn
          </li>
          <li>
            <Swatch kind="branch" /> on the right: branching conditions (solid when they fired)
          </li>
          <li>
            <Swatch kind="binding" /> on the left: bindings, an earlier step&apos;s result read by a
            later step
          </li>
        </ul>
        {bindings.length > 0 ? (
          <ul className="sr-only" aria-label="Bindings between steps" data-testid="binding-list">
            {bindings.map((edge) => (
              <li key={`${edge.fromStepId}-${edge.toStepId}-${edge.field}`}>{bindingText(edge)}</li>
            ))}
          </ul>
        ) : null}
      </figcaption>
    </figure>
  );
}

/** A legend's sample of a line style; decorative, the text beside it says what it means. */
function Swatch({ kind }: { kind: "server" | "branch" | "binding" }) {
  return (
    <svg width="28" height="10" aria-hidden="true" className={`flow-swatch flow-swatch-${kind}`}>
      {kind === "server" ? (
        <rect x="1" y="1" width="26" height="8" rx="2" />
      ) : (
        <line x1="1" y1="5" x2="27" y2="5" />
      )}
    </svg>
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
