/**
 * The plan card's document (ui://cairn/plan-card.html): create_research_plan's,
 * get_plan_status's and get_research_context's view. It follows the plan by
 * calling read_plan_card until the plan ends (the route pushes nothing): every
 * 5 s while the plan moves, twice as long after each read that found nothing
 * new, up to 10 s, and not while the card is hidden; and shows the review card
 * while a review waits.
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import { useCallback, useEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import type { z } from "zod";
import { decisionMessage } from "@/app/_components/review/decision-message";
import type { UserDecisionResult } from "@/lib/services/plans/submit-user-decision";
import type { planCardOutput } from "@/lib/services/reviews/review-card";
import { callCairn, errorText, learnOrigin, useCard } from "./card-app";
import { ReviewCardView } from "./review-card-view";

type PlanCard = z.infer<typeof planCardOutput>;

/** The first wait between reads, and the longest once the plan stands still. */
const REFRESH_MS = 5_000;
const MAX_REFRESH_MS = 10_000;
const ENDED = ["completed", "failed", "cancelled"];

function usePlan(app: App, planId: string) {
  const [plan, setPlan] = useState<PlanCard | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The last read's JSON, to tell a read that found something new. */
  const shown = useRef("");
  const refresh = useCallback(async (): Promise<boolean> => {
    try {
      const read = await callCairn<PlanCard>(app, "read_plan_card", { planId });
      learnOrigin(read.planUrl);
      const json = JSON.stringify(read);
      const changed = json !== shown.current;
      shown.current = json;
      setPlan(read);
      setError(null);
      return changed;
    } catch (failure) {
      setError(errorText(failure));
      return false;
    }
  }, [app, planId]);
  const ended = plan !== null && ENDED.includes(plan.status);
  useEffect(() => {
    if (ended) return;
    let wait = REFRESH_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const next = () => {
      timer = setTimeout(async () => {
        if (document.visibilityState !== "hidden") {
          wait = (await refresh()) ? REFRESH_MS : Math.min(wait * 2, MAX_REFRESH_MS);
        }
        if (!stopped) next();
      }, wait);
    };
    void refresh();
    next();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [refresh, ended]);
  return { plan, error, refresh };
}

const label = (status: string) => status.replaceAll("_", " ");

function PlanView({ app, planId }: { app: App; planId: string }) {
  const { plan, error, refresh } = usePlan(app, planId);
  // The outcome of a decision taken in the embedded review card, kept once the review is gone.
  const [decided, setDecided] = useState<UserDecisionResult | null>(null);
  if (!plan) {
    return error ? (
      <p role="alert" className="notice notice-error" data-testid="card-error">
        {error}
      </p>
    ) : (
      <p className="muted">Loading the plan…</p>
    );
  }
  const { progress } = plan;
  return (
    <section className="card plan-card" aria-labelledby="plan-heading" data-testid="plan-card">
      <h1 id="plan-heading">{plan.name}</h1>
      <p>
        <span className={`badge badge-${plan.status}`} data-testid="plan-status">
          {label(plan.status)}
        </span>{" "}
        <span className="muted">
          {progress.completed + progress.skipped + progress.failed} of {progress.total} steps done
        </span>
      </p>
      <progress
        max={100}
        value={progress.percent}
        aria-label={`${progress.percent}% of the plan done`}
      />
      {error ? (
        <p role="alert" className="notice notice-error">
          Could not refresh: {error}
        </p>
      ) : null}
      {plan.cancellation ? (
        <p className="notice notice-warning" role="status">
          Cancelled by {plan.cancellation.by}: {plan.cancellation.reason}
        </p>
      ) : null}
      {plan.stallWarnings.map((warning) => (
        <p key={warning.stepId} className="notice notice-warning" role="status">
          Step {warning.stepOrder} has been in progress for {Math.round(warning.inProgressSeconds)}{" "}
          s without word from the agent: resume with get_next_step, or resolve it with modify_plan.
        </p>
      ))}
      {plan.pauseReason ? (
        <div className="notice notice-warning" role="status" data-testid="pause-reason">
          <p>
            Paused at step {plan.pauseReason.stepOrder}: {plan.pauseReason.message}
          </p>
          <p>
            What unblocks it: <code>{plan.pauseReason.suggestedTool.name}</code>{" "}
            <code>{JSON.stringify(plan.pauseReason.suggestedTool.arguments)}</code>
          </p>
        </div>
      ) : null}
      <ol className="plan-card-steps" data-testid="plan-steps">
        {plan.steps.map((step) => (
          <li key={step.stepId}>
            <span>{step.stepType}</span>{" "}
            {step.sentBack ? (
              // As the plan page shows it: a person's feedback waits for the agent.
              <span className="badge badge-pending" data-testid="step-sent-back">
                sent back
              </span>
            ) : (
              <span className={`badge badge-${step.status}`}>{label(step.status)}</span>
            )}
          </li>
        ))}
      </ol>
      <p>
        <a href={plan.planUrl}>Open the plan in Cairn</a>
      </p>
      {decided ? (
        <p className="notice notice-success" role="status" data-testid="plan-card-decided">
          {decisionMessage(decided, plan.status)}
        </p>
      ) : null}
      {plan.status === "awaiting_review" ? (
        <ReviewCardView
          nested
          app={app}
          planId={planId}
          onDecided={(result) => {
            setDecided(result);
            void refresh();
          }}
        />
      ) : null}
    </section>
  );
}

function PlanCardApp() {
  const { app, error, planId } = useCard("Cairn plan card");
  if (error) return <p role="alert">Cairn's plan card could not connect: {errorText(error)}</p>;
  if (!app || !planId) return <p className="muted">Waiting for the plan…</p>;
  return <PlanView app={app} planId={planId} />;
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<PlanCardApp />);
