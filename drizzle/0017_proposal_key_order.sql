-- A review's proposed result is shown field by field in the order the agent
-- sent it: jsonb reorders an object's keys, json keeps the text as sent. Rows
-- stored before keep jsonb's order, which was all that was left of theirs.
ALTER TABLE "review_request" ALTER COLUMN "proposed_result" SET DATA TYPE json;
