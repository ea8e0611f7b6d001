import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { notFound } from "next/navigation";
import { AutoRefresh } from "@/app/_components/auto-refresh";
import { EvidenceSection, ReviewEvidence } from "@/app/_components/evidence-view";
import { CursorRefused, oneParam } from "@/app/_components/pagination";
import { requireUser } from "@/lib/auth/session";
import { publicOrigin } from "@/lib/oauth/config";
import { isTerminalPlanStatus } from "@/lib/plan-engine/transitions";
import { pendingReviewOf } from "@/lib/services/reviews/review-view";
import { isCursorRefused, orCursorRefused } from "@/lib/services/shared/pagination";
import type { PlanPage } from "@/lib/services/views/plan-page";
import { views } from "@/lib/web/views";
import { ArtifactList } from "./artifact-list";
import { AuditTrail } from "./audit-trail";
import { DeliverableView } from "./deliverable-view";
import { HistorySection } from "./history-section";
import { PlanHeader } from "./plan-header";
import { PlanNotices } from "./plan-notices";
import { PlanFlow, StepTimeline } from "./plan-picture";
import { ReviewArea } from "./review-area";
import { StepsSection } from "./steps-section";

export const metadata: Metadata = { title: "Plan" };

/**
 * This page's own origin, as the browser sees it: Markdown images from it may
 * be shown. CAIRN_PUBLIC_URL, else an allowed Host with the scheme a trusted
 * proxy reports (never a client's own X-Forwarded-* headers).
 */
async function pageOrigin(): Promise<string | null> {
  return publicOrigin(await headers()) ?? null;
}

type Params = { planId: string };
type Search = {
  audit?: string | string[];
  sources?: string | string[];
  claims?: string | string[];
  steps?: string | string[];
  history?: string | string[];
};

export default async function PlanPageView({
  params,
  searchParams,
}: {
  params: Promise<Params>;
  searchParams: Promise<Search>;
}) {
  const user = await requireUser();
  const { planId } = await params;
  const search = await searchParams;
  const one = oneParam;
  const page = await orCursorRefused(
    views.planPage(user, planId, one(search.audit), {
      sourcesCursor: one(search.sources),
      claimsCursor: one(search.claims),
      stepsCursor: one(search.steps),
    }),
  );
  if (isCursorRefused(page)) {
    return (
      <article className="plan">
        <h1>Plan</h1>
        <CursorRefused firstPage={`/plans/${planId}`} />
      </article>
    );
  }
  if (!page) notFound();
  const members = await views.teamMembers(user);
  const review = pendingReviewOf(page, members);
  const snoozedUntil = review ? await views.snoozedUntil(user, review.reviewRequestId) : undefined;
  // Read once the plan is found, so another team's plan is a 404 whatever the cursor.
  const history = await orCursorRefused(views.planHistory(user, planId, one(search.history)));

  return (
    <article className="plan">
      {isTerminalPlanStatus(page.plan.status) ? null : <AutoRefresh />}
      <p>
        <Link href="/plans">← All plans</Link>
      </p>
      <PlanHeader page={page} />
      <PlanNotices page={page} />
      <ReviewArea
        planId={page.plan.planId}
        planStatus={page.plan.status}
        review={review}
        snoozedUntil={snoozedUntil}
        evidence={<ReviewEvidence evidence={page.evidence} stepOrder={pendingStepOrder(page)} />}
        currentUserId={user.userId}
        members={members}
      />
      <DeliverableView page={page} origin={await pageOrigin()} />
      <ArtifactList page={page} />
      <EvidenceSection
        page={page}
        at={{ sources: one(search.sources), claims: one(search.claims) }}
      />
      <StepsSection page={page} />
      <PlanPicture page={page} />
      {isCursorRefused(history) ? (
        <CursorRefused firstPage={`/plans/${planId}`} />
      ) : (
        <HistorySection planId={planId} history={history} cursor={one(search.history)} />
      )}
      <AuditTrail page={page} />
    </article>
  );
}

/** The step of the review waiting for a decision: its claims and those before it are shown with it. */
const pendingStepOrder = (page: PlanPage) => page.pendingReview?.stepOrder ?? null;

/** The plan as a flow of steps and conditions, and as a timeline. */
function PlanPicture({ page }: { page: PlanPage }) {
  return (
    <section aria-labelledby="picture-heading" className="two-col">
      <div>
        <h2 id="picture-heading">Flow</h2>
        <PlanFlow
          steps={page.steps}
          conditions={page.branchingConditions}
          bindings={page.bindingEdges}
        />
      </div>
      <div>
        <h2>Timeline</h2>
        <StepTimeline steps={page.steps} now={page.now} />
      </div>
    </section>
  );
}
