-- Custom SQL (all of this migration; drizzle-kit generate --custom):
-- Each Cairn instance keeps the credentials it checked for a few seconds
-- (lib/mcp/credential-cache.ts); any change that could end or
-- alter what a key or token stands for tells every instance to forget them at
-- once, whoever makes it (the app, the CLI, an operator's SQL). One
-- notification per statement; PostgreSQL sends it at commit, and folds
-- identical ones of one transaction into one.
CREATE FUNCTION notify_credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('cairn_credentials_changed', '');
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER api_key_changed AFTER UPDATE OF revoked_at, name, user_id, tenant_id, key_hash OR DELETE ON api_key
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();--> statement-breakpoint
CREATE TRIGGER app_user_changed AFTER UPDATE OF disabled_at, email, tenant_id OR DELETE ON app_user
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();--> statement-breakpoint
CREATE TRIGGER oauth_grant_changed AFTER UPDATE OF revoked_at, resource, user_id, tenant_id, client_id OR DELETE ON oauth_grant
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();--> statement-breakpoint
CREATE TRIGGER oauth_token_changed AFTER UPDATE OF revoked_at, expires_at, grant_id, token_hash, kind OR DELETE ON oauth_token
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();--> statement-breakpoint
CREATE TRIGGER oauth_client_changed AFTER UPDATE OF client_name, client_id OR DELETE ON oauth_client
  FOR EACH STATEMENT EXECUTE FUNCTION notify_credentials_changed();
