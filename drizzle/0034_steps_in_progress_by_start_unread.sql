-- No query reads a team's steps in progress by their start. The stall check
-- reads the steps in progress (all of them, or a plan's) through
-- plan_step_in_progress_order_idx, which holds the same rows; and every claim
-- wrote an entry here too, at the right edge of its team's range, where all of
-- a team's agents write.
DROP INDEX "plan_step_in_progress_idx";