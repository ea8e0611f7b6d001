-- Custom SQL (all of this migration; drizzle-kit generate --custom):
-- A credential change is heard by every instance through the notification of
-- 0019, which PostgreSQL sends at commit and which reaches each instance's
-- listening connection a moment later: an instance that made the change could
-- answer "revoked" and then, in that moment, still pass a call with the old
-- credential it remembered (lib/mcp/credential-cache.ts). The change also
-- tells its own session, at once, by a notice with the channel's name, which
-- the writing connection reads before the statement's result
-- (lib/db/postgres-client.ts): the instance that makes a change forgets before
-- it answers. An operator's psql shows the notice; the CLI's client ignores it.
CREATE OR REPLACE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('cairn_credentials_changed', '');
  RAISE NOTICE 'cairn_credentials_changed'
    USING DETAIL = 'Cairn instances forget the API keys and tokens they remembered.';
  RETURN NULL;
END
$$;
