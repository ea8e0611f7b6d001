/**
 * A review's content digest: sha256 over what the reviewer is shown (the
 * summary, the questions, the proposed result and confidence, the step's
 * instructions), computed by the database function `review_content_digest`
 * (drizzle/0007_checkpoints.sql) so the request, the review page and the
 * decision compute it alike. "Current" uses the step's instructions as they
 * are now: when modify_plan changed them while the review waited, the current
 * digest differs from the one requested, and a decision bound to the old one
 * is a CONFLICT. The proposal is hashed as jsonb (the column keeps the
 * agent's key order as json), so a digest does not depend on key order.
 */
import "server-only";
import { type SQL, sql } from "drizzle-orm";

export function reviewContentDigestSql(parts: {
  summary: SQL;
  questions: SQL;
  proposedResult: SQL;
  proposedConfidence: SQL;
  instructions: SQL;
}): SQL<string> {
  return sql<string>`review_content_digest(${parts.summary}, ${parts.questions}, (${parts.proposedResult})::jsonb, ${parts.proposedConfidence}, ${parts.instructions})`;
}

/** The digest of a stored review (alias `review`) over its step's current instructions (alias `step`). */
export const currentReviewDigest = reviewContentDigestSql({
  summary: sql`review.summary`,
  questions: sql`review.questions`,
  proposedResult: sql`review.proposed_result`,
  proposedConfidence: sql`review.proposed_confidence`,
  instructions: sql`step.instructions`,
});
