CREATE TABLE "review_snooze" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"review_request_id" uuid NOT NULL,
	"plan_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"until" timestamp with time zone NOT NULL,
	"time_zone" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"returned_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "review_snooze" ADD CONSTRAINT "review_snooze_tenant_id_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenant"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_snooze" ADD CONSTRAINT "review_snooze_review_request_id_review_request_id_fk" FOREIGN KEY ("review_request_id") REFERENCES "public"."review_request"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_snooze" ADD CONSTRAINT "review_snooze_plan_id_research_plan_id_fk" FOREIGN KEY ("plan_id") REFERENCES "public"."research_plan"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "review_snooze" ADD CONSTRAINT "review_snooze_user_id_app_user_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."app_user"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "review_snooze_person_idx" ON "review_snooze" USING btree ("review_request_id","user_id");--> statement-breakpoint
CREATE INDEX "review_snooze_due_idx" ON "review_snooze" USING btree ("until") WHERE "review_snooze"."returned_at" is null;--> statement-breakpoint
CREATE INDEX "review_snooze_user_idx" ON "review_snooze" USING btree ("user_id","until") WHERE "review_snooze"."returned_at" is null;--> statement-breakpoint
-- A snooze ends by itself when its review is no longer pending (decided,
-- withdrawn), whatever path changed the review (docs/reviews.md, "Snooze"):
-- the scheduler then has nothing to bring back.
CREATE FUNCTION review_snooze_end_with_review() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE review_snooze SET returned_at = now()
    WHERE review_request_id = NEW.id AND returned_at IS NULL;
  RETURN NULL;
END;
$$;--> statement-breakpoint
CREATE TRIGGER review_snooze_end_with_review AFTER UPDATE OF status ON review_request
  FOR EACH ROW WHEN (OLD.status = 'pending' AND NEW.status <> 'pending')
  EXECUTE FUNCTION review_snooze_end_with_review();
