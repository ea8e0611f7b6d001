-- Custom SQL (all of this migration; drizzle-kit generate --custom):
-- The one JSON value a read answers, planned and run only when it is called.
-- PostgreSQL sets up every sub-plan of a statement on each execution, whether
-- or not a row ever reaches it: the claim's read of a completed plan's answer
-- (three sub-plans) cost every claim its start-up, and is wanted only by a
-- get_next_step on a completed plan (lib/services/loop/claim-next-step.ts).
-- Called in a branch, the read costs only the calls that take the branch its
-- planning.
--
-- Generic on purpose, like run_after (0035): the read's text stays in
-- lib/services (lib/db/statement.ts, `readWhenNeeded`); its parameters are
-- one text[] (each `$n` read as `$1[n]`), so no value is part of its text.
-- STABLE: the read sees the calling statement's snapshot, as a sub-plan would.
CREATE FUNCTION read_json(statement_text text, params text[]) RETURNS json
LANGUAGE plpgsql STABLE AS $$
DECLARE
  answer json;
BEGIN
  EXECUTE statement_text INTO answer USING params;
  RETURN answer;
END $$;
