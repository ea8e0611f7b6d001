ALTER TABLE "oauth_client" ADD COLUMN "fetch_error" text;--> statement-breakpoint
ALTER TABLE "tenant" DROP COLUMN "allow_private_webhooks";