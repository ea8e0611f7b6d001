import { Pagination } from "@/app/_components/pagination";
import { Time } from "@/app/_components/time";
import type { PlanHistory, PlanRevisionView } from "@/lib/services/plans/get-plan-history";

type Diff = PlanRevisionView["diff"];
type Shown = Diff["instructions"][number]["from"];

/** A diff's value as it was kept: its beginning, marked when it was cut. */
function Value({ value }: { value: Shown }) {
  if (value === null) return <span className="muted">none</span>;
  return (
    <q className="pre-wrap">
      {value.text}
      {value.cut ? "…" : ""}
    </q>
  );
}

/** One revision's change to the steps, a line per step touched. */
function DiffList({ diff }: { diff: Diff }) {
  const lines = [
    ...diff.added.map((s) => (
      <li key={`a${s.stepId}`}>
        Added step {s.stepOrder} ({s.stepType}): <Value value={s.instructions} />
      </li>
    )),
    ...diff.removed.map((s) => (
      <li key={`r${s.stepId}`}>
        Removed step {s.stepOrder}: <Value value={s.instructions} />
      </li>
    )),
    ...diff.moved.map((s) => (
      <li key={`m${s.stepId}`}>
        Moved step {s.from} to {s.to}
      </li>
    )),
    ...diff.instructions.map((s) => (
      <li key={`i${s.stepId}`}>
        Step {s.stepOrder} instructions: <Value value={s.from} /> → <Value value={s.to} />
      </li>
    )),
    ...diff.arguments.map((s) => (
      <li key={`g${s.stepId}`}>
        Step {s.stepOrder} arguments: <Value value={s.from} /> → <Value value={s.to} />
      </li>
    )),
    ...diff.status.map((s) => (
      <li key={`s${s.stepId}`}>
        Step {s.stepOrder} {s.to === "pending" ? "put back to pending" : s.to}
      </li>
    )),
  ];
  if (lines.length === 0) return <p className="muted">No step changed.</p>;
  return (
    <ul data-testid="revision-diff">
      {lines}
      {diff.omitted > 0 ? <li className="muted">and {diff.omitted} more changes</li> : null}
    </ul>
  );
}

/** The plan's revisions, newest first, a page at a time (`?history=`, a cursor). */
export function HistorySection({
  planId,
  history,
  cursor,
}: {
  planId: string;
  history: PlanHistory;
  cursor: string | undefined;
}) {
  return (
    <section aria-labelledby="history-heading" data-testid="plan-history">
      <h2 id="history-heading">History</h2>
      <ol className="history" reversed>
        {history.revisions.map((revision) => (
          <li key={revision.revision} data-testid="revision" data-revision={revision.revision}>
            <p>
              <strong>Revision {revision.revision}</strong> · <code>{revision.cause}</code> ·{" "}
              {revision.by.label} · <Time iso={revision.at} />
            </p>
            {revision.rationale ? (
              <p className="pre-wrap muted" data-testid="revision-rationale">
                {revision.rationale}
                {revision.rationaleCut ? "…" : ""}
              </p>
            ) : null}
            <DiffList diff={revision.diff} />
          </li>
        ))}
      </ol>
      <Pagination
        cursor={cursor}
        nextCursor={history.nextCursor}
        basePath={`/plans/${planId}`}
        params={{}}
        cursorParam="history"
        label="History pages"
        testId="history"
      >
        Revisions, newest first
      </Pagination>
    </section>
  );
}
