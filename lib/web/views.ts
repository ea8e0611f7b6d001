/**
 * The web door's reads, each for the signed-in user's tenant. Pages call these
 * rather than the database, so tenancy is decided in one place.
 */
import "server-only";
import { userContext } from "../auth/session";
import { undefinedIfNotFound } from "../plan-engine/app-error";
import type { SignedInUser } from "../services/accounts/signed-in-user";
import { exportAuditTrail } from "../services/audit/export-audit-trail";
import { exportPlanEvidence } from "../services/evidence/export-evidence";
import { webhooksView } from "../services/notifications/webhooks";
import { listFailedPlans } from "../services/plans/fork-failed-plans";
import { getPlanHistory } from "../services/plans/get-plan-history";
import { searchSources } from "../services/research/search-sources";
import { settleDeadlinesOfPlan, settleDeadlinesOfTenant } from "../services/reviews/deadline-state";
import { getDecisionPolicy } from "../services/reviews/decision-rules";
import { getEscalationChain } from "../services/reviews/escalation-chain";
import { getReviewDefaults } from "../services/reviews/review-defaults";
import { getReviewQuorum } from "../services/reviews/review-quorum";
import { adminOverview } from "../services/views/admin-overview";
import { getForkForm } from "../services/views/fork-form";
import { type FullValueQuery, readFullValue } from "../services/views/full-values";
import {
  type ArtifactPart,
  getArtifact,
  listArtifacts,
  listArtifactTypes,
  readArtifactPart,
  skillExecutionOverview,
} from "../services/views/library-views";
import { teamMembers } from "../services/views/pending-review";
import { getPlanDeliverable, getPlanPage, type PlanPageCursors } from "../services/views/plan-page";
import { countAwaitingReview, listPlans } from "../services/views/plans-list";
import {
  type InboxFilters,
  inboxPlans,
  listInbox,
  recentDecisions,
} from "../services/views/review-inbox";
import { countSnoozed, snoozedUntil } from "../services/views/snoozed-reviews";
import { listStalledPlans } from "../services/views/stalled-plans";
import { teamRulesView } from "../services/views/team-rules";
import { getToolCallLog } from "../services/views/tool-calls";
import { listTenantApiKeys, listTenantUsers } from "../services/views/users-and-keys";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const views = {
  async plans(user: SignedInUser, input: Parameters<typeof listPlans>[1]) {
    return listPlans(await userContext(user), input);
  },
  async inboxCount(user: SignedInUser) {
    return countAwaitingReview(await userContext(user));
  },
  async planPage(
    user: SignedInUser,
    planId: string,
    auditCursor: string | undefined,
    cursors: PlanPageCursors = {},
  ) {
    const ctx = await userContext(user);
    // A review whose deadline passed is applied before the page shows it.
    if (UUID.test(planId)) await settleDeadlinesOfPlan(ctx, planId);
    return getPlanPage(ctx, planId, auditCursor, cursors);
  },
  /** The "Fork from here" form's steps; undefined for a plan or step not in the user's tenant. */
  async forkForm(user: SignedInUser, planId: string, stepId: string) {
    return getForkForm(await userContext(user), planId, stepId);
  },
  /** A page of the plan's revisions with their diffs: get_plan_history's answer. */
  async planHistory(user: SignedInUser, planId: string, cursor: string | undefined) {
    return getPlanHistory(await userContext(user), { planId, cursor });
  },
  /** A plan's name and newest deliverable; undefined for a plan not in the user's tenant. */
  async planDeliverable(user: SignedInUser, planId: string) {
    return getPlanDeliverable(await userContext(user), planId);
  },
  /** The plan's audit trail with its hash chain; undefined for a plan not in the user's tenant. */
  async auditExport(user: SignedInUser, planId: string) {
    if (!UUID.test(planId)) return undefined;
    return undefinedIfNotFound(exportAuditTrail(await userContext(user), planId));
  },
  /** The plan's sources and claims; undefined for a plan not in the user's tenant. */
  async evidenceExport(user: SignedInUser, planId: string) {
    if (!UUID.test(planId)) return undefined;
    return undefinedIfNotFound(exportPlanEvidence(await userContext(user), planId));
  },
  /** One long value of a plan in full; undefined when it is not in the user's tenant. */
  async fullValue(user: SignedInUser, planId: string, query: FullValueQuery) {
    return readFullValue(await userContext(user), planId, query);
  },
  async decisionPolicy(user: SignedInUser) {
    return getDecisionPolicy(await userContext(user));
  },
  async inbox(user: SignedInUser, filters: InboxFilters) {
    const ctx = await userContext(user);
    await settleDeadlinesOfTenant(ctx);
    const [inbox, plans, decided, decisionPolicy, snoozed] = await Promise.all([
      listInbox(ctx, { ...filters, role: user.role }),
      inboxPlans(ctx),
      recentDecisions(ctx),
      getDecisionPolicy(ctx),
      countSnoozed(ctx),
    ]);
    // On the Snoozed view, when each of the page's reviews comes back.
    const until = filters.snoozed
      ? await snoozedUntil(
          ctx,
          inbox.reviews.map((review) => review.reviewRequestId),
        )
      : new Map<string, string>();
    return {
      inbox,
      plans,
      decided,
      decisionPolicy,
      snoozed,
      snoozedUntil: Object.fromEntries(until),
    };
  },
  /** When the user's snooze of this review ends; undefined when they have none running. */
  async snoozedUntil(user: SignedInUser, reviewRequestId: string) {
    return (await snoozedUntil(await userContext(user), [reviewRequestId])).get(reviewRequestId);
  },
  async reviewDefaults(user: SignedInUser) {
    return getReviewDefaults(await userContext(user));
  },
  /** The team's escalation chain, its people by e-mail; null when it has none. */
  async escalationChain(user: SignedInUser) {
    return getEscalationChain(await userContext(user));
  },
  /** The team's quorum: distinct approvals each review needs at least. */
  async reviewQuorum(user: SignedInUser) {
    return getReviewQuorum(await userContext(user));
  },
  /** The trusted-clients form and the team's trail of rule changes, for the admin page. */
  async teamRules(user: SignedInUser) {
    return teamRulesView(await userContext(user));
  },
  /** The active team members a review can be handed to. */
  async teamMembers(user: SignedInUser) {
    return teamMembers(await userContext(user));
  },

  async stalledPlans(user: SignedInUser, cursor: string | undefined) {
    return listStalledPlans(await userContext(user), { cursor });
  },
  /** The bulk fork's preview: how many failed plans match, and a page of them. */
  async failedPlans(user: SignedInUser, input: Parameters<typeof listFailedPlans>[1]) {
    return listFailedPlans(await userContext(user), input);
  },
  async toolCalls(user: SignedInUser, input: Parameters<typeof getToolCallLog>[1]) {
    return getToolCallLog(await userContext(user), input);
  },
  async search(user: SignedInUser, input: Parameters<typeof searchSources>[1]) {
    return searchSources(await userContext(user), input);
  },
  async artifacts(user: SignedInUser, input: Parameters<typeof listArtifacts>[1]) {
    return listArtifacts(await userContext(user), input);
  },
  async artifactTypes(user: SignedInUser) {
    return listArtifactTypes(await userContext(user));
  },
  async artifact(user: SignedInUser, artifactId: string) {
    return getArtifact(await userContext(user), artifactId);
  },
  /** An artifact's text or content whole; undefined when it is not in the user's tenant. */
  async artifactPart(user: SignedInUser, artifactId: string, part: ArtifactPart) {
    return readArtifactPart(await userContext(user), artifactId, part);
  },
  async skillRuns(user: SignedInUser) {
    return skillExecutionOverview(await userContext(user));
  },
  async users(user: SignedInUser) {
    return listTenantUsers(await userContext(user));
  },
  async apiKeys(user: SignedInUser) {
    return listTenantApiKeys(await userContext(user));
  },
  async adminOverview(user: SignedInUser) {
    return adminOverview(await userContext(user));
  },
  async webhooks(user: SignedInUser) {
    return webhooksView(await userContext(user));
  },
};
