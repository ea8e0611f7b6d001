import Link from "next/link";
import { Time } from "@/app/_components/time";
import type { PlanPage } from "@/lib/services/views/plan-page";

/** The plan's newest artifacts by title and excerpt; the full content is one click away, in the Library. */
export function ArtifactList({ page }: { page: PlanPage }) {
  const { total, newest } = page.artifacts;
  const orderOf = new Map(page.steps.map((s) => [s.stepId, s.stepOrder]));
  return (
    <section aria-labelledby="artifacts-heading">
      <h2 id="artifacts-heading">Artifacts</h2>
      {total === 0 ? (
        <p className="muted">None stored yet.</p>
      ) : (
        <>
          <ol className="cards" data-testid="plan-artifacts">
            {newest.map((artifact) => {
              const stepOrder = artifact.stepId ? orderOf.get(artifact.stepId) : undefined;
              return (
                <li key={artifact.artifactId} className="card">
                  <h3 className="hit-title">
                    <Link href={`/library/${artifact.artifactId}`}>{artifact.title}</Link>
                  </h3>
                  <p className="muted">
                    {artifact.artifactType}
                    {stepOrder ? ` · step ${stepOrder}` : ""} · <Time iso={artifact.createdAt} />
                  </p>
                  <p className="clamp">
                    {artifact.excerpt}
                    {artifact.excerptTruncated ? "…" : ""}
                  </p>
                </li>
              );
            })}
          </ol>
          {total > newest.length ? (
            <p className="muted" data-testid="plan-artifacts-more">
              The newest {newest.length} of {total} artifacts; the{" "}
              <Link href="/library">Library</Link> has every one.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}
