/**
 * Section 6, server-run steps: plans of 10 steps whose first 5 are
 * search_sources steps Cairn runs itself over a seeded library, then 5 agent
 * steps. Measures the get_next_step call that runs the 5 server steps and
 * hands out the first agent step, in process on one connection, and counts
 * the statements it sends (each one round trip).
 */
import { openDatabase } from "@/lib/db/client";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { storeResearch } from "@/lib/services/research/store-research";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type LatencySummary, summarise } from "./support/stats";
import type { BenchTenant } from "./support/tenant";

export type ServerStepsRun = {
  plans: number;
  artifacts: number;
  serverStepsPerCall: number;
  latency: LatencySummary;
  /** Statements sent by one such get_next_step (the median over the plans). */
  roundTrips: number;
  /** Of which the tools' own reads: one search statement per search_sources step. */
  toolReads: number;
};

const PLANS = 30;
const ARTIFACTS = 500;
const SERVER_STEPS = 5;
const TOPICS = ["heat pump", "battery recycling", "solar panels", "wind turbines", "insulation"];

export async function runServerSteps(url: string, tenant: BenchTenant): Promise<ServerStepsRun> {
  let statements = 0;
  const handle = await openDatabase({
    kind: "postgres",
    url,
    maxConnections: 1,
    onQuery: () => {
      statements += 1;
    },
  });
  try {
    const ctx: ServiceContext = {
      db: handle.db,
      tenantId: tenant.tenantId,
      actor: { type: "api_key", id: tenant.apiKeyId, label: "benchmark agent" },
      stallThresholdSeconds: 1800,
    };
    for (let i = 0; i < ARTIFACTS; i += 1) {
      const topic = TOPICS[i % TOPICS.length];
      await storeResearch(ctx, {
        artifactType: "finding",
        title: `${topic} finding ${i}`,
        content: { i },
        contentText: `${topic}: measured figure ${i} from a survey of installations.`,
        confidence: 0.7,
      });
    }
    const samples: number[] = [];
    const trips: number[] = [];
    for (let p = 0; p < PLANS; p += 1) {
      const plan = await createPlan(ctx, {
        name: `Server steps ${p}`,
        researchQuestion: "What do installations show?",
        steps: [
          ...TOPICS.slice(0, SERVER_STEPS).map((topic) => ({
            stepType: "search" as const,
            instructions: `Library: ${topic}.`,
            tool: "search_sources",
            arguments: { query: topic, limit: 10 },
          })),
          ...Array.from({ length: 10 - SERVER_STEPS }, (_, i) => ({
            stepType: "analyze" as const,
            instructions: `Analyse part ${i + 1}.`,
            ...(i === 0 ? { inputs: { hits: "{{steps.1.result.results}}" } } : {}),
          })),
        ],
      });
      statements = 0;
      const started = performance.now();
      const next = await getNextStep(ctx, { planId: plan.planId });
      samples.push(performance.now() - started);
      trips.push(statements);
      if (next.status !== "ready" || next.serverSteps?.length !== SERVER_STEPS) {
        throw new Error(`server steps did not all run: ${JSON.stringify(next)}`);
      }
    }
    trips.sort((a, b) => a - b);
    return {
      plans: PLANS,
      artifacts: ARTIFACTS,
      serverStepsPerCall: SERVER_STEPS,
      latency: summarise(samples),
      roundTrips: trips[Math.floor(trips.length / 2)] ?? 0,
      toolReads: SERVER_STEPS,
    };
  } finally {
    await handle.close();
  }
}
