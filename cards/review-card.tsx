/** The review card's document (ui://cairn/review-card.html): request_user_review's and get_next_step's view. */
import { createRoot } from "react-dom/client";
import { errorText, useCard } from "./card-app";
import { ReviewCardView } from "./review-card-view";

function ReviewCardApp() {
  const { app, error, planId } = useCard("Cairn review card");
  if (error) return <p role="alert">Cairn's review card could not connect: {errorText(error)}</p>;
  if (!app || !planId) return <p className="muted">Waiting for the plan…</p>;
  return <ReviewCardView app={app} planId={planId} />;
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<ReviewCardApp />);
