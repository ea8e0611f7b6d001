import { Time } from "@/app/_components/time";
import { type ClaimStatus, claimsForReview } from "@/lib/plan-engine/evidence";
import type { EvidenceClaim, PlanEvidence } from "@/lib/services/evidence/read-evidence";
import type { PlanPage } from "@/lib/services/views/plan-page";
import { citationSummary } from "@/lib/web/citation-summary";

const STATUS_LABELS: Record<ClaimStatus, string> = {
  unsupported: "Unsupported",
  contested: "Contested",
  supported: "Supported",
};

type Citation = EvidenceClaim["supports"][number];

/** A link to a source an agent named: always http(s) (its canonical link), opened apart from Cairn. */
function SourceLink({
  href,
  title,
  sourceKey,
}: {
  href: string;
  title?: string | null;
  sourceKey: string;
}) {
  return (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {title ?? sourceKey}
    </a>
  );
}

function Citations({ label, citations }: { label: string; citations: Citation[] }) {
  if (citations.length === 0) return null;
  return (
    <div>
      <span className="muted">{label}:</span>
      <ul className="plain">
        {citations.map((citation) => (
          <li
            key={`${citation.sourceKey} ${citation.locator} ${citation.quote}`}
            data-testid="citation"
          >
            <SourceLink {...citation} />
            {citation.locator ? <span className="muted"> · {citation.locator}</span> : null}
            {citation.quote ? (
              <blockquote className="pre-wrap">
                “{citation.quote}
                {citation.quoteShortened ? "…" : ""}”
              </blockquote>
            ) : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Claims for a reviewer: unsupported, then contested, then supported (`claimsForReview`). */
export function ClaimList({ claims, showStep }: { claims: EvidenceClaim[]; showStep: boolean }) {
  return (
    <ol className="plain claims" data-testid="claims">
      {claimsForReview(claims).map((claim) => (
        <li key={claim.claimId} data-testid="claim" data-status={claim.status}>
          <span className={`badge badge-claim-${claim.status}`}>{STATUS_LABELS[claim.status]}</span>{" "}
          {claim.key ? <span className="badge">Key claim</span> : null}{" "}
          {showStep ? <span className="muted">Step {claim.stepOrder}: </span> : null}
          <strong className="pre-wrap">{claim.text}</strong>
          <Citations label="Supported by" citations={claim.supports} />
          <Citations label="Contradicted by" citations={claim.contradicts} />
        </li>
      ))}
    </ol>
  );
}

/**
 * What a reviewer of step `stepOrder` checks: the claims of that step and the
 * steps before it, unsupported and contested first. Rendered on the server and
 * handed to the review panel, so the claims never travel to the browser as data.
 */
export function ReviewEvidence({
  evidence,
  stepOrder,
}: {
  evidence: PlanEvidence;
  stepOrder: number | null;
}) {
  const claims = evidence.claims.filter((c) => stepOrder === null || c.stepOrder <= stepOrder);
  if (claims.length === 0) return null;
  const flagged = claims.filter((c) => c.status !== "supported").length;
  return (
    <section aria-labelledby="review-claims-heading" data-testid="review-claims">
      <h3 id="review-claims-heading">Claims to check</h3>
      <p className="muted">
        {claims.length} claim{claims.length === 1 ? "" : "s"} so far
        {flagged > 0 ? `, ${flagged} unsupported or contested (listed first)` : ""}.
      </p>
      <ClaimList claims={claims} showStep />
    </section>
  );
}

/** Where the evidence section's pages start: the `sources` and `claims` parameters of the plan page. */
export type EvidencePageAt = { sources?: string; claims?: string };

/** The plan page's address with one list of evidence moved to `cursor` (null: its first page). */
function evidencePageHref(
  planId: string,
  at: EvidencePageAt,
  list: "sources" | "claims",
  cursor: string | null,
) {
  const params = new URLSearchParams();
  const next = { ...at, [list]: cursor ?? undefined };
  if (next.sources) params.set("sources", next.sources);
  if (next.claims) params.set("claims", next.claims);
  const query = params.toString();
  return `/plans/${planId}${query ? `?${query}` : ""}#evidence-heading`;
}

/** Links to a list's next page and back to its first. */
function EvidencePager({
  planId,
  at,
  list,
  nextCursor,
}: {
  planId: string;
  at: EvidencePageAt;
  list: "sources" | "claims";
  nextCursor: string | null;
}) {
  if (!nextCursor && !at[list]) return null;
  return (
    <p data-testid={`evidence-${list}-pager`}>
      {at[list] ? <a href={evidencePageHref(planId, at, list, null)}>First {list}</a> : null}
      {at[list] && nextCursor ? " · " : null}
      {nextCursor ? (
        <a href={evidencePageHref(planId, at, list, nextCursor)}>More {list} →</a>
      ) : null}
    </p>
  );
}

/**
 * The plan's evidence across steps, a page of each list at a time (the page is
 * read again every few seconds while the plan runs): its sources, once each,
 * and its claims by step. Extracts and quotes are shortened; the JSON export
 * has them whole.
 */
export function EvidenceSection({ page, at = {} }: { page: PlanPage; at?: EvidencePageAt }) {
  const { sources, claims, sourcesTotal, claimsTotal } = page.evidence;
  if (sourcesTotal === 0 && claimsTotal === 0) return null;
  const steps = [...new Set(claims.map((c) => c.stepOrder))];
  const planId = page.plan.planId;
  return (
    <section aria-labelledby="evidence-heading" className="card" data-testid="evidence">
      <h2 id="evidence-heading">Evidence</h2>
      <p className="muted">
        {sourcesTotal} source{sourcesTotal === 1 ? "" : "s"} read, {claimsTotal} claim
        {claimsTotal === 1 ? "" : "s"}
        {sources.length < sourcesTotal || claims.length < claimsTotal
          ? ` (this page: ${sources.length} and ${claims.length})`
          : ""}{" "}
        ·{" "}
        <a href={`/plans/${planId}/evidence`} download>
          Export as JSON
        </a>
      </p>
      {steps.map((stepOrder) => (
        <div key={stepOrder}>
          <h3>Step {stepOrder}</h3>
          <ClaimList claims={claims.filter((c) => c.stepOrder === stepOrder)} showStep={false} />
        </div>
      ))}
      <EvidencePager
        planId={planId}
        at={at}
        list="claims"
        nextCursor={page.evidence.claimsNextCursor}
      />
      {sources.length > 0 ? (
        <>
          <h3>Sources</h3>
          <div className="table-wrap">
            <table className="table" data-testid="sources">
              <thead>
                <tr>
                  <th>Source</th>
                  <th>First read</th>
                  <th>Content digest</th>
                </tr>
              </thead>
              <tbody>
                {sources.map((source) => (
                  <tr key={source.sourceKey} data-testid="source">
                    <td>
                      <SourceLink {...source} />
                      {source.title ? <div className="muted">{source.sourceKey}</div> : null}
                      {source.extract ? (
                        <details>
                          <summary>What was extracted</summary>
                          <p className="pre-wrap">
                            {source.extract}
                            {source.extractShortened ? "…" : ""}
                          </p>
                        </details>
                      ) : null}
                    </td>
                    <td>
                      {source.firstStepOrder === null ? "" : `Step ${source.firstStepOrder}, `}
                      <Time iso={source.firstReadAt} />
                    </td>
                    <td>
                      {source.contentDigest ? (
                        <code>{source.contentDigest.slice(0, 19)}…</code>
                      ) : (
                        "—"
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <EvidencePager
        planId={planId}
        at={at}
        list="sources"
        nextCursor={page.evidence.sourcesNextCursor}
      />
    </section>
  );
}

type CitationCheck = NonNullable<NonNullable<PlanPage["deliverable"]>["citationCheck"]>;

/** Beside the deliverable: what its citations name, checked against the plan's sources when it was stored. */
export function CitationCheckView({ check }: { check: CitationCheck }) {
  const notRead = check.citations.filter((c) => c.status === "not_read");
  const read = check.citations.length - notRead.length;
  const clean =
    notRead.length === 0 &&
    check.unresolvedReferences.length === 0 &&
    check.uncitedKeyClaims.length === 0;
  return (
    <div className={clean ? "notice" : "notice notice-warning"} data-testid="citation-check">
      <p>
        <strong>Citations:</strong> {citationSummary(check.citations.length, read)}
      </p>
      {notRead.length > 0 ? (
        <div data-testid="citations-not-read">
          Never read by this plan:
          <ul>
            {notRead.map((c) => (
              <li key={c.key}>
                <a href={c.href} target="_blank" rel="noopener noreferrer nofollow">
                  {c.written}
                </a>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {check.unresolvedReferences.length > 0 ? (
        <p data-testid="references-unresolved">
          Numbered references with no linked entry: {check.unresolvedReferences.join(", ")}
        </p>
      ) : null}
      {check.uncitedKeyClaims.length > 0 ? (
        <div data-testid="key-claims-uncited">
          Key claims stated without any of their sources cited:
          <ul>
            {check.uncitedKeyClaims.map((c) => (
              <li key={`${c.stepId} ${c.text}`}>
                Step {c.stepOrder}: {c.text}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {check.truncated ? (
        <p className="muted">Only the first citations and uncited key claims are listed.</p>
      ) : null}
    </div>
  );
}
