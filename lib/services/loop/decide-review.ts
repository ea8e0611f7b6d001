/**
 * A review decision's write once the engine decided on a locked snapshot
 * (`decideReviewDecision`): the step, the review, the decision row and the
 * completion's effects, with their audit rows, as one fixed statement. The
 * step's lease ends: it leaves awaiting_input, or a modify hands it back
 * released (in progress with no expiry), for the claim rule to hand out again.
 * The plan's audit head, which now ends with the decision, is signed in the
 * same transaction (docs/audit.md, "Signed heads").
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { jsonParam, run, statement } from "../../db/statement";
import { HANDED_OUT_STATUS } from "../../plan-engine/claims";
import type { ReviewDecisionOutcome } from "../../plan-engine/review-decision";
import type { DecisionChannel, DecisionPolicy, ReviewDecision } from "../../plan-engine/states";
import { isTerminalStepStatus } from "../../plan-engine/transitions";
import { signHeadAtDecision } from "../audit/sign-heads";
import type { ServiceContext } from "../shared/context";
import { recordRevision } from "../shared/revisions";
import { completionAuditInsert, completionEffectsCtes, effectsParams } from "./completion-effects";

const decideReview = statement(
  "write a review decision",
  `with ${completionEffectsCtes}, step_update as (
    update plan_step set status = $12::step_status, instructions = $13::text,
      failure_reason = $14::text,
      result = case when $15::boolean then $16::jsonb else result end,
      confidence = case when $15::boolean then $17::float8 else confidence end,
      started_at = case when $12::text = '${HANDED_OUT_STATUS}' then $3::timestamptz
        else started_at end,
      completed_at = case when $18::boolean then $3::timestamptz else completed_at end,
      lease_expires_at = null,
      updated_at = $3::timestamptz
    where id = $2::uuid
  ), review_update as (
    update review_request set status = 'decided', decided_at = $3::timestamptz
    where id = $19::uuid
  ), decision_insert as (
    insert into review_decision (tenant_id, review_request_id, plan_id, step_id, decision,
      feedback, decided_by_type, decided_by_id, decided_by_label, channel, review_digest,
      decision_policy, created_at)
    values ($20::uuid, $19::uuid, $1::uuid, $2::uuid, $21::review_decision_kind, $22::text,
      $23::actor_type, $24::uuid, $25::text, $26::decision_channel, $27::text,
      $28::decision_policy, $3::timestamptz)
  ) ${completionAuditInsert}`,
  z.unknown(),
);

export async function writeReviewDecision(
  tx: Transaction,
  ctx: ServiceContext,
  write: {
    planId: string;
    stepId: string;
    reviewRequestId: string;
    decision: ReviewDecision;
    feedback: string | null;
    channel: DecisionChannel;
    digest: string;
    /** The team's rule on who decides, as it stood when this decision was made. */
    decisionPolicy: DecisionPolicy;
    decided: ReviewDecisionOutcome;
    now: string;
  },
): Promise<void> {
  const { decided } = write;
  await run(tx, decideReview, [
    ...effectsParams(ctx, write.planId, write.stepId, decided, write.now),
    decided.stepStatus,
    decided.instructions,
    decided.failureReason,
    decided.result !== null,
    decided.result !== null ? jsonParam(decided.result) : null,
    decided.confidence,
    isTerminalStepStatus(decided.stepStatus),
    write.reviewRequestId,
    ctx.tenantId,
    write.decision,
    write.feedback,
    ctx.actor.type,
    ctx.actor.id,
    ctx.actor.label,
    write.channel,
    write.digest,
    write.decisionPolicy,
  ]);
  await recordRevision(tx, ctx, decided.audit);
  await signHeadAtDecision(tx, write.planId);
}
