import { Time } from "@/app/_components/time";
import { type ClaimStatus, claimsForReview } from "@/lib/plan-engine/evidence";
import type { EvidenceClaim, PlanEvidence } from "@/lib/services/evidence/read-evidence";
import type { PlanPage } from "@/lib/services/views/plan-views";

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
  title: string | null;
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
              <blockquote className="pre-wrap">“{citation.quote}”</blockquote>
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

/** The plan's evidence across steps: its sources, once each, and each step's claims. */
export function EvidenceSection({ page }: { page: PlanPage }) {
  const { sources, claims } = page.evidence;
  if (sources.length === 0 && claims.length === 0) return null;
  const steps = [...new Set(claims.map((c) => c.stepOrder))];
  return (
    <section aria-labelledby="evidence-heading" className="card" data-testid="evidence">
      <h2 id="evidence-heading">Evidence</h2>
      <p className="muted">
        {sources.length} source{sources.length === 1 ? "" : "s"} read, {claims.length} claim
        {claims.length === 1 ? "" : "s"} ·{" "}
        <a href={`/plans/${page.plan.planId}/evidence`} download>
          Export as JSON
        </a>
      </p>
      {steps.map((stepOrder) => (
        <div key={stepOrder}>
          <h3>Step {stepOrder}</h3>
          <ClaimList claims={claims.filter((c) => c.stepOrder === stepOrder)} showStep={false} />
        </div>
      ))}
      {sources.length > 0 ? (
        <>
          <h3>Sources</h3>
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
                        <p className="pre-wrap">{source.extract}</p>
                      </details>
                    ) : null}
                  </td>
                  <td>
                    {source.firstStepOrder === null ? "" : `Step ${source.firstStepOrder}, `}
                    <Time iso={source.firstReadAt} />
                  </td>
                  <td>
                    {source.contentDigest ? <code>{source.contentDigest.slice(0, 19)}…</code> : "—"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
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
        <strong>Citations:</strong> {check.citations.length} cited, {read} read by this plan
        {clean ? "; every key claim's source is cited." : "."}
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
      {check.truncated ? <p className="muted">Only the first citations were checked.</p> : null}
    </div>
  );
}
