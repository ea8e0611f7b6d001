CREATE TABLE "plan_audit_head" (
	"plan_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"chain_length" integer NOT NULL,
	"last_digest" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "plan_audit_head" ADD CONSTRAINT "plan_audit_head_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Every row of a plan's trail links to the one before it, whoever writes it,
-- and the plan's head (its chain's length and last digest) moves with it in
-- the writer's transaction, so a deleted newest row no longer reaches the head.
-- The head's row lock, held to commit, orders concurrent writers of one plan's
-- trail (the loop's writers hold the plan's row lock already). The plan's
-- first row creates the head; a writer that loses that race waits for the
-- winner's commit and chains after it.
CREATE OR REPLACE FUNCTION plan_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  previous text;
BEGIN
  IF NEW.plan_id IS NULL THEN
    RETURN NEW;
  END IF;
  LOOP
    UPDATE plan_audit_head SET chain_length = chain_length + 1 WHERE plan_id = NEW.plan_id
      RETURNING chain_length, last_digest INTO NEW.chain_index, previous;
    EXIT WHEN FOUND;
    NEW.chain_index := 1;
    NEW.prev_digest := NULL;
    NEW.digest := encode(sha256(convert_to(audit_row_canonical(NEW), 'UTF8')), 'hex');
    INSERT INTO plan_audit_head (plan_id, tenant_id, chain_length, last_digest)
      VALUES (NEW.plan_id, NEW.tenant_id, 1, NEW.digest)
      ON CONFLICT (plan_id) DO NOTHING;
    IF FOUND THEN
      RETURN NEW;
    END IF;
  END LOOP;
  NEW.prev_digest := previous;
  NEW.digest := encode(sha256(convert_to(previous || audit_row_canonical(NEW), 'UTF8')), 'hex');
  UPDATE plan_audit_head SET last_digest = NEW.digest WHERE plan_id = NEW.plan_id;
  RETURN NEW;
END
$$;--> statement-breakpoint
-- Trails written before the head existed get theirs: their last link now.
INSERT INTO plan_audit_head (plan_id, tenant_id, chain_length, last_digest)
SELECT DISTINCT ON (plan_id) plan_id, tenant_id, chain_index, digest
FROM plan_audit_log
WHERE plan_id IS NOT NULL AND chain_index IS NOT NULL
ORDER BY plan_id, chain_index DESC;
