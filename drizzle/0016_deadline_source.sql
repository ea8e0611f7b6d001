-- Whose a pending review's deadline is (docs/reviews.md, "Deadlines under a
-- policy switch"): a review stored before this column counts as timed by its
-- requester, the reading under which its deadline is checked against the
-- policy in force when it fires.
ALTER TABLE "review_request" ADD COLUMN "deadline_from_team" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "review_request" ADD COLUMN "on_timeout_replaced" "review_timeout_action";
