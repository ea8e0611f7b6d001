/**
 * search_sources over the tenant's library: stemmed words and a typo in a
 * title find an artifact; the plan, type and date filters narrow the hits.
 * In process, on PGlite and on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Database } from "@/lib/db/client";
import { selectRows } from "@/lib/db/rows";
import { searchSources } from "@/lib/services/research/search-sources";
import { BACKENDS, postgresWithHolder } from "../support/databases";
import { planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("search_sources on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("finds by stem and by a title typo, and filters by plan, type and date", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Recycling",
      researchQuestion: "q",
      steps: planSteps("search"),
    });
    const store = (artifactType: string, title: string, planId?: string) =>
      agent.ok("store_research", {
        artifactType,
        title,
        content: {},
        contentText: `${title}: what the sources say about it.`,
        confidence: 0.6,
        planId,
      });
    const inPlan = await store("finding", "Battery recycling capacity", plan.planId);
    const elsewhere = await store("analysis", "Recycling of textiles");
    const ids = async (args: Record<string, unknown>) =>
      (await agent.ok("search_sources", args)).results.map((hit) => hit.artifactId).sort();

    expect(await ids({ query: "recycled" })).toEqual(
      [inPlan.artifactId, elsewhere.artifactId].sort(),
    );
    expect(await ids({ query: "recyling" })).toEqual(
      [inPlan.artifactId, elsewhere.artifactId].sort(),
    );
    expect(await ids({ query: "recycling", planId: plan.planId })).toEqual([inPlan.artifactId]);
    expect(await ids({ query: "recycling", artifactType: "analysis" })).toEqual([
      elsewhere.artifactId,
    ]);
    expect(await ids({ query: "recycling", since: "9999-01-01" })).toEqual([]);
    expect(await ids({ query: "recycling", since: "2000-01-01" })).toHaveLength(2);
  });
});

describe.each(BACKENDS)("search_sources inside another transaction on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("finds with its own settings and leaves the transaction's as they were", async () => {
    const { ctx } = tenant.agent;
    const stored = await tenant.agent.ok("store_research", {
      artifactType: "finding",
      title: "Lithium recycling yields",
      content: {},
      contentText: "What the sources say about lithium recycling.",
      confidence: 0.6,
    });
    // What the search sets while it runs (drizzle/0042_search_json.sql).
    const settings = z.object({
      threshold: z.string(),
      syncScans: z.string(),
      workers: z.string(),
      planCache: z.string(),
    });
    const read = (db: Database) =>
      selectRows(
        db,
        settings,
        sql`select current_setting('pg_trgm.word_similarity_threshold', true) as "threshold",
          current_setting('synchronize_seqscans') as "syncScans",
          current_setting('max_parallel_workers_per_gather') as "workers",
          current_setting('plan_cache_mode') as "planCache"`,
      );
    await ctx.db.transaction(async (transaction) => {
      const tx = transaction as unknown as Database;
      // pg_trgm's own default, set so the test does not depend on whether this
      // connection has loaded pg_trgm yet (before that the setting reads null).
      await tx.execute(sql`select set_config('pg_trgm.word_similarity_threshold', '0.6', true)`);
      const before = await read(tx);
      expect(before).toEqual([expect.objectContaining({ threshold: "0.6" })]);
      // A typo in each word: no stem matches, and the title's word similarity
      // (0.55) passes only the search's own threshold (0.4), not pg_trgm's 0.6.
      const found = await searchSources({ ...ctx, db: tx }, { query: "lithum recyling" });
      expect(found.results.map((hit) => hit.artifactId)).toEqual([stored.artifactId]);
      expect(await read(tx)).toEqual(before);
    });
  });
});

describe.each(BACKENDS)("a search that fails in the database on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("is answered as a row, and the transaction it ran in goes on", async () => {
    const { ctx } = tenant.agent;
    await ctx.db.transaction(async (transaction) => {
      const tx = transaction as unknown as Database;
      const answered = await selectRows(
        tx,
        z.object({ found: z.unknown() }),
        sql`select found from search_json('select 1 / 0 as x', '{}'::text[]) as found`,
      );
      expect(answered).toEqual([
        { found: { failed: { code: "22012", message: "division by zero" } } },
      ]);
      const after = await selectRows(tx, z.object({ one: z.number() }), sql`select 1 as one`);
      expect(after).toEqual([{ one: 1 }]);
    });
  });
});

describe("search_sources failing inside another transaction on postgres", () => {
  let db: Awaited<ReturnType<typeof postgresWithHolder>>;
  beforeAll(async () => {
    db = await postgresWithHolder([]);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("raises the database's error, and the transaction goes on to record it", async () => {
    const ctx = await tenantContext(db.handle.db, "Alpha");
    // Another connection holds the library, so the search waits past its lock
    // deadline: what a server-run step's search meets under a deadline.
    await db.other.begin(async (holder) => {
      await holder.unsafe("lock table research_artifact in access exclusive mode");
      await ctx.db.transaction(async (transaction) => {
        const tx = transaction as unknown as Database;
        await tx.execute(sql`set local lock_timeout = '100ms'`);
        const failed = await searchSources({ ...ctx, db: tx }, { query: "heat pumps" }).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(failed).toMatchObject({ code: "55P03" });
        expect(String((failed as Error).message)).toContain("lock");
        const after = await selectRows(tx, z.object({ one: z.number() }), sql`select 1 as one`);
        expect(after).toEqual([{ one: 1 }]);
      });
    });
  });
});
