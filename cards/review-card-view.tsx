/**
 * The review card: the review page's panel (app/(app)/plans/[planId]/review-area.tsx)
 * in a chat client, from the same components in the same order, deciding
 * through decide_in_review_card. Where a decision here would not count (only
 * people decide, and this connection proves none), it says why and links the
 * review page instead of offering the buttons.
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import { useActionState, useCallback, useEffect, useState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { ReviewEvidence } from "@/app/_components/evidence-view";
import { decisionMessage } from "@/app/_components/review/decision-message";
import {
  type DecisionChoice,
  ReviewDecisionForm,
} from "@/app/_components/review/review-decision-form";
import { ReviewFacts } from "@/app/_components/review/review-facts";
import { ReviewLead } from "@/app/_components/review/review-lead";
import { TERMINAL_PLAN_STATUSES } from "@/lib/plan-engine/states";
import type { UserDecisionResult } from "@/lib/services/plans/submit-user-decision";
import type { ReviewCard } from "@/lib/services/reviews/review-card";
import type { ActionState } from "@/lib/web/action-state";
import { CairnError, callCairn, errorText, learnOrigin } from "./card-app";

const IDLE: ActionState = { status: "idle" };

/** How often a card with no review waiting reads where the plan stands, until the plan ends. */
const FOLLOW_MS = 5_000;

function whoDecides(card: ReviewCard): string {
  const rule =
    card.decisionPolicy === "people_only"
      ? "Only people decide this team's checkpoints."
      : "People decide this team's checkpoints, and agents may relay their answers.";
  const here =
    card.decideHere.as === "person"
      ? "A decision here is recorded as yours, made in this chat."
      : "A decision here is recorded as relayed by this connection, not as yours.";
  return card.decideHere.allowed ? `${rule} ${here}` : rule;
}

export function ReviewCardView({
  app,
  planId,
  onDecided,
  nested = false,
}: {
  app: App;
  planId: string;
  onDecided?: (result: UserDecisionResult) => void;
  /** Inside the plan card, under its heading; on its own, the plan's name heads the document. */
  nested?: boolean;
}) {
  const [card, setCard] = useState<ReviewCard | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const read = await callCairn<ReviewCard>(app, "read_review_card", { planId });
      learnOrigin(read.planUrl);
      setCard(read);
      setLoadError(null);
    } catch (error) {
      setLoadError(errorText(error));
    }
  }, [app, planId]);
  useEffect(() => {
    void load();
  }, [load]);
  // On its own, with no review waiting (decided here or elsewhere), the card
  // follows the plan so what it says stays true; inside the plan card, that
  // card follows the plan.
  const ended =
    card !== null && (TERMINAL_PLAN_STATUSES as readonly string[]).includes(card.planStatus);
  const following = !nested && card !== null && card.review === null && !ended;
  useEffect(() => {
    if (!following) return;
    const timer = setInterval(() => void load(), FOLLOW_MS);
    return () => clearInterval(timer);
  }, [following, load]);
  // The decision made here, to say again as the plan moves on.
  const [decided, setDecided] = useState<UserDecisionResult | null>(null);

  const [state, action] = useActionState(
    async (_previous: ActionState, choice: DecisionChoice): Promise<ActionState> => {
      try {
        const result = await callCairn<UserDecisionResult>(app, "decide_in_review_card", choice);
        const message = decisionMessage(result);
        // The agent learns the outcome before its next turn, and carries on.
        await app
          .updateModelContext({
            content: [
              {
                type: "text",
                text: `The person decided Cairn's review in the review card: ${message} (plan status: ${result.planStatus}). ${result.hint}`,
              },
            ],
          })
          .catch(() => {});
        setDecided(result);
        onDecided?.(result);
        await load();
        return { status: "success", message };
      } catch (error) {
        await load();
        if (error instanceof CairnError && error.code === "CONFLICT") {
          return { status: "conflict", message: error.message };
        }
        return { status: "error", message: errorText(error) };
      }
    },
    IDLE,
  );

  if (loadError) {
    return (
      <p role="alert" className="notice notice-error" data-testid="card-error">
        {loadError}
      </p>
    );
  }
  if (!card) return <p className="muted">Loading the review…</p>;
  const shown: ActionState =
    state.status === "success" && decided
      ? { status: "success", message: decisionMessage(decided, card.planStatus) }
      : state;

  const title = nested ? null : <h1>{card.planName}</h1>;
  const review = card.review;
  if (!review) {
    return (
      <>
        {title}
        <section className="card review" aria-labelledby="review-heading" data-testid="review-card">
          <h2 id="review-heading">Review</h2>
          <ActionMessage state={shown} />
          <p data-testid="current-state">
            {state.status === "idle" ? "No review waits on this plan. " : ""}The plan is now{" "}
            <strong>{card.planStatus.replace("_", " ")}</strong>.{" "}
            <a href={card.planUrl}>Open the plan in Cairn</a>
          </p>
        </section>
      </>
    );
  }

  return (
    <>
      {title}
      <section
        className="card review review-pending"
        aria-labelledby="review-heading"
        data-testid="review-card"
      >
        <ReviewLead review={review}>
          <ReviewEvidence evidence={card.evidence} stepOrder={review.stepOrder} />
        </ReviewLead>
        {card.decideHere.allowed ? (
          <ReviewDecisionForm review={review} onDecide={action} state={shown} />
        ) : (
          <p className="notice notice-warning" role="status" data-testid="decide-elsewhere">
            {card.decideHere.reason} <a href={card.reviewUrl}>Open the review page</a>
          </p>
        )}
        <ReviewFacts review={review} />
        <p className="muted" data-testid="who-decides">
          {whoDecides(card)}
        </p>
        {state.status !== "idle" && state.status !== "success" ? (
          <p className="muted">
            <a href={card.reviewUrl}>Open the review page</a>
          </p>
        ) : null}
      </section>
    </>
  );
}
