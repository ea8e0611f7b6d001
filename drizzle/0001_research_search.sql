-- search_sources matches titles by trigram similarity (pg_trgm, a trusted extension since PostgreSQL 13,
-- so the database owner may create it). The embedded database loads it in lib/db/client.ts.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
ALTER TABLE "research_artifact" ADD COLUMN "search_vector" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english'::regconfig, "title"), 'A') || setweight(to_tsvector('english'::regconfig, "content_text"), 'B')) STORED NOT NULL;--> statement-breakpoint
CREATE INDEX "research_artifact_search_idx" ON "research_artifact" USING gin ("search_vector");--> statement-breakpoint
CREATE INDEX "research_artifact_title_trgm_idx" ON "research_artifact" USING gin ("title" gin_trgm_ops);--> statement-breakpoint
-- No statistics on titles: the only predicate on them is search_sources' trigram
-- match, whose selectivity estimator runs word_similarity against every sampled
-- title on every planning (about 20 ms a query on the embedded database), while
-- the plan it should choose, the trigram index, never depends on the estimate.
ALTER TABLE "research_artifact" ALTER COLUMN "title" SET STATISTICS 0;
