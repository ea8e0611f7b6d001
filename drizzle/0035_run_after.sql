-- One statement that runs another after a first, each reading what committed
-- before it started (a volatile function's statements each take a snapshot of
-- their own in READ COMMITTED). The submit behind a plan's lock
-- (lib/services/loop/complete-step-guarded.ts) waits for the lock in the first
-- and writes in the second: the lock is then held from its grant to the
-- commit inside one call, where a transaction of its own held it across two
-- round trips to the agent's process and the commit's.
--
-- Generic on purpose: both statements' text and rules stay in lib/services
-- (lib/db/statement.ts, `statementAfter`), and travel with their parameters as
-- text, which each statement casts as it always has.

-- `statement_text`'s EXECUTE with `params`, prepared in this session first if
-- it is not yet (named by the text's digest, so two versions of a statement
-- never share a name). A prepared statement keeps its plan: planned afresh on
-- each call, the submit spent as long planning as running, with the plan's
-- lock held. Found missing (a new connection, or a pooler that reset it), it
-- is prepared again. Twenty-four parameters at most (statementAfter checks).
CREATE FUNCTION run_after_prepared(statement_text text, params text[]) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  statement_name text := 'run_after_' || md5(statement_text);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements p WHERE p.name = statement_name) THEN
    EXECUTE format('PREPARE %I(%s) AS %s', statement_name,
      array_to_string(array_fill('text'::text, ARRAY[24]), ', '), statement_text);
  END IF;
  RETURN format('EXECUTE %I(%s)', statement_name,
    (SELECT string_agg(quote_nullable(params[i]), ', ' ORDER BY i) FROM generate_series(1, 24) i));
END $$;
--> statement-breakpoint
CREATE FUNCTION run_after(first_text text, first_params text[], then_text text, then_params text[])
RETURNS SETOF jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  answer record;
BEGIN
  EXECUTE run_after_prepared(first_text, first_params);
  FOR answer IN EXECUTE run_after_prepared(then_text, then_params) LOOP
    RETURN NEXT to_jsonb(answer);
  END LOOP;
END $$;
