-- Custom SQL (all of this migration; drizzle-kit generate --custom):
-- search_sources' statement (lib/services/research/search-sources.ts) run with
-- the settings it needs, for its own execution only. A function's SET clauses
-- hold while it runs and are restored when it returns, fails or not; the SET
-- LOCAL they replace lasted to the end of the caller's transaction, and a
-- search run inside another (a server-run step's, which holds its plan) left
-- them to that transaction's later statements. The search needed a
-- transaction of its own for them too: begin, the settings, the search and
-- the commit, four round trips where this is one.
--
-- The settings:
-- - pg_trgm's word similarity threshold, 0.4: the default (0.6) misses a single
--   typo in a two-word query ("lithium recyling" scores 0.47); 0.4 keeps those
--   and still needs about half the query's trigrams in one stretch of a title.
-- - No synchronised scans: the ranking pools are the first matches in table
--   order, so a sequential scan must start at the first block, not where the
--   last one on the table stopped (tables larger than a quarter of
--   shared_buffers).
-- - No parallel workers, which return their blocks interleaved.
--
-- The statement is planned on each call (EXECUTE), with its parameters' values
-- in view, so the plan fits the call's terms and tenant. Its parameters are one
-- text[] (each `$n` read as `$1[n]`; lib/db/statement.ts, `executedText`), so
-- no value is part of its text; it casts each as it needs. Each row comes back
-- as JSON, in the statement's order (the caller reads them WITH ORDINALITY).
--
-- A search that fails in the database (its deadline, a lock it waited too
-- long for) is answered as one row, {"failed": {"code", "message"}}, after
-- whatever rows it had made, and the caller raises it: an error raised here
-- would abort the caller's transaction, and a server-run step's must go on to
-- record the step's failure and pause the plan on it, as a savepoint of its own
-- let it before. The block's subtransaction is the savepoint now, inside the
-- one statement. query_canceled is named because OTHERS leaves it out: it is
-- how the statement deadline ends a search.
CREATE FUNCTION search_json(statement_text text, params text[]) RETURNS SETOF json
LANGUAGE plpgsql STABLE
SET pg_trgm.word_similarity_threshold = 0.4
SET synchronize_seqscans = off
SET max_parallel_workers_per_gather = 0
AS $$
BEGIN
  -- On a line of its own, so a comment ending the text cannot swallow it.
  RETURN QUERY EXECUTE 'select row_to_json(found) from (' || statement_text || E'\n) found'
    USING params;
EXCEPTION WHEN OTHERS OR query_canceled THEN
  RETURN QUERY SELECT json_build_object('failed', json_build_object('code', SQLSTATE, 'message', SQLERRM));
END $$;
