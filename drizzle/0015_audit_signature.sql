CREATE TABLE "plan_audit_signature" (
	"plan_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"chain_length" integer NOT NULL,
	"head_digest" text NOT NULL,
	"key_id" text,
	"signature" text,
	"signed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "plan_audit_signature_key_check" CHECK (("plan_audit_signature"."key_id" is null) = ("plan_audit_signature"."signature" is null))
);
--> statement-breakpoint
ALTER TABLE "plan_audit_signature" ADD CONSTRAINT "plan_audit_signature_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Trails written before signing began are marked, not signed (the database
-- holds no key): their rows up to this length are reported unsigned rather than
-- as a decision no signature covers, and the scheduler's first passes sign them.
INSERT INTO plan_audit_signature (plan_id, tenant_id, chain_length, head_digest)
SELECT plan_id, tenant_id, chain_length, last_digest FROM plan_audit_head;
