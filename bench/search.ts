/**
 * Section 5, search: search_sources latency over 1,000 and then 100,000
 * artifacts of one tenant, in process (like the other scale figures: the
 * transport's cost does not grow with the library). The artifacts are seeded
 * with set-based SQL from a fixed vocabulary, so titles and texts share words
 * the way a real library does and every query has matches to rank.
 */
import type { Sql } from "postgres";
import { openDatabase } from "@/lib/db/client";
import { searchSources } from "@/lib/services/research/search-sources";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type LatencySummary, summarise, timed } from "./support/stats";
import type { BenchTenant } from "./support/tenant";

export type SearchPoint = { artifacts: number; seedSeconds: number; latency: LatencySummary };

const VOCABULARY = [
  "heat",
  "pump",
  "battery",
  "recycling",
  "solar",
  "wind",
  "grid",
  "storage",
  "hydrogen",
  "electrolyser",
  "copper",
  "lithium",
  "cobalt",
  "market",
  "price",
  "policy",
  "subsidy",
  "carbon",
  "emissions",
  "efficiency",
  "insulation",
  "district",
  "geothermal",
  "nuclear",
  "offshore",
  "turbine",
  "inverter",
  "charging",
  "vehicle",
  "logistics",
  "supply",
  "chain",
  "semiconductor",
  "capacity",
  "forecast",
  "demand",
  "tariff",
  "regulation",
  "europe",
  "china",
  "india",
  "brazil",
  "startup",
  "investment",
  "competitor",
  "benchmark",
  "survey",
  "trial",
  "customer",
  "retention",
];

/** Two to three words each, some misspelt (trigram side) and some inflected (stemming). */
const QUERIES = [
  "heat pump efficiency",
  "battery recycling market",
  "solar inverter price",
  "wind turbine offshore",
  "grid storage capacity",
  "hydrogen electrolyser policy",
  "lithium supply chain",
  "copper demand forecast",
  "carbon emissions regulation",
  "district geothermal",
  "charging vehicles europe",
  "semiconductor investments",
  "competitor benchmarks",
  "customer retention survey",
  "nuclear subsidies india",
  "batery recyling",
  "geotermal distrct",
  "electrolizer hydrogen",
  "turbines forecasting",
  "tariffs regulations china",
];
const ROUNDS = 10;

async function seed(sql: Sql, tenant: BenchTenant, from: number, to: number) {
  const words = `array[${VOCABULARY.map((w) => `'${w}'`).join(",")}]`;
  const pick = (salt: number) =>
    `(${words})[1 + abs(hashtext(g::text || '${salt}')) % ${VOCABULARY.length}]`;
  const title = [1, 2, 3, 4].map(pick).join(" || ' ' || ");
  const text = Array.from({ length: 30 }, (_, i) => pick(100 + i)).join(" || ' ' || ");
  for (let start = from; start <= to; start += 20_000) {
    const end = Math.min(to, start + 19_999);
    await sql.unsafe(`
      insert into research_artifact (tenant_id, artifact_type, title, content, content_text, confidence, source_urls, created_at)
      select '${tenant.tenantId}'::uuid,
             (array['source_summary','finding','analysis','data_extract'])[1 + g % 4],
             initcap(${title}),
             jsonb_build_object('n', g),
             ${text} || '.',
             0.5 + (g % 50) / 100.0,
             '[]'::jsonb,
             now() - g * interval '1 second'
      from generate_series(${start}, ${end}) as g`);
  }
  await sql`analyze research_artifact`;
}

export async function runSearch(
  url: string,
  sql: Sql,
  tenant: BenchTenant,
  sizes: readonly number[],
): Promise<SearchPoint[]> {
  const handle = await openDatabase({ kind: "postgres", url, maxConnections: 1 });
  const ctx: ServiceContext = {
    db: handle.db,
    tenantId: tenant.tenantId,
    actor: { type: "api_key", id: tenant.apiKeyId, label: "bench" },
    stallThresholdSeconds: 1800,
  };
  const points: SearchPoint[] = [];
  try {
    let seeded = 0;
    for (const size of sizes) {
      const started = performance.now();
      await seed(sql, tenant, seeded + 1, size);
      const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
      seeded = size;
      // Warm the caches the way a running server has them warm.
      for (const query of QUERIES) await searchSources(ctx, { query, limit: 10 });
      const samples: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const query of QUERIES) {
          const found = await timed(samples, () => searchSources(ctx, { query, limit: 10 }));
          if (found.results.length === 0)
            throw new Error(`search_sources found nothing for "${query}".`);
        }
      }
      points.push({ artifacts: size, seedSeconds, latency: summarise(samples) });
    }
  } finally {
    await handle.close();
  }
  return points;
}
