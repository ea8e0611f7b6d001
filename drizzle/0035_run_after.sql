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

-- The EXECUTE of `statement_text`, prepared in this session first if it is
-- not yet. A prepared statement keeps its plan: planned afresh on each call,
-- the submit spent as long planning as running, with the plan's lock held.
-- Its parameters are one text[] (each `$n` read as `$1[n]`), set by run_after
-- in `run_after.params` for the transaction, so no value is ever part of a
-- statement's text (nor, on an error, of the server's log). Named by the
-- text's digest and the latest migration: two versions of a statement never
-- share a name, and a migration that changes what a statement answers cannot
-- leave a session with a plan of the old shape (which PostgreSQL would refuse
-- to run). Found missing (a new connection, or a pooler that reset it), it is
-- prepared again.
CREATE FUNCTION run_after_prepared(statement_text text, schema_version text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  statement_name text := 'run_after_' || md5(schema_version || statement_text);
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_prepared_statements p WHERE p.name = statement_name) THEN
    EXECUTE format('PREPARE %I(text[]) AS %s', statement_name,
      regexp_replace(statement_text, '\$(\d+)', '($1[\1])', 'g'));
  END IF;
  RETURN format('EXECUTE %I(current_setting(''run_after.params'')::text[])', statement_name);
END $$;
--> statement-breakpoint
-- Both statements are found or prepared before the first runs, so nothing
-- but the second runs between the first's lock and the commit.
CREATE FUNCTION run_after(first_text text, first_params text[], then_text text, then_params text[])
RETURNS SETOF jsonb LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  schema_version text := (SELECT max(id)::text FROM drizzle.__drizzle_migrations);
  first_execute text := run_after_prepared(first_text, schema_version);
  then_execute text := run_after_prepared(then_text, schema_version);
  answer record;
BEGIN
  PERFORM set_config('run_after.params', first_params::text, true);
  EXECUTE first_execute;
  PERFORM set_config('run_after.params', then_params::text, true);
  FOR answer IN EXECUTE then_execute LOOP
    RETURN NEXT to_jsonb(answer);
  END LOOP;
END $$;
