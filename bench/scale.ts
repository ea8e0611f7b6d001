/**
 * Section 5, scale: get_next_step and get_plan_status latency with 100 and
 * with 100,000 plans in the database, with their steps and audit rows. The plans are
 * seeded with set-based SQL (generate_series), not service calls, so seeding
 * 100,000 plans takes about two minutes instead of hours. Each size has its own
 * database in the one cluster, and the calls alternate between them, one call
 * on each in turn: the two figures of a ratio are then taken side by side, under
 * the same load on a shared machine, not a seeding apart. The calls are measured
 * in process on one connection per database: the transport's cost does not
 * grow with the data, so leaving it out shows what does.
 */
import { createHash } from "node:crypto";
import type { Sql } from "postgres";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type LatencySummary, summarise, timed } from "./support/stats";
import type { BenchTenant } from "./support/tenant";

export type ScalePoint = {
  plans: number;
  steps: number;
  auditRows: number;
  seedSeconds: number;
  getNextStep: LatencySummary;
  getPlanStatus: LatencySummary;
};

const STEPS_PER_PLAN = 10;
/** Every fourth seeded plan is still executing (steps 6-10 pending), the rest completed. */
const EXECUTING_EVERY = 4;
/**
 * Plans seeded per transaction. Each plan's audit rows take that plan's
 * chain lock (docs/audit.md), held to commit: a batch stays well inside the
 * server's lock table (64 locks per connection, 200 connections).
 */
const SEED_BATCH = 2_000;
/** Samples per figure: 100 claims fit the 125 pending steps of the 100-plan database. */
const NEXT_STEP_SAMPLES = 100;
const STATUS_SAMPLES = 300;

/**
 * The id the seeder gives plan `g`: its md5 with the version and variant digits
 * of a v4 UUID (the services accept nothing else), so the client can name any
 * seeded plan without reading it back.
 */
function seededPlanId(g: number): string {
  const hex = createHash("md5").update(`bench-plan-${g}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** Seeds plans 1 to `to`. */
async function seed(sql: Sql, tenant: BenchTenant, to: number) {
  await sql`
    create or replace function bench_uuid(key text) returns uuid language sql immutable as $$
      select (substr(md5(key), 1, 12) || '4' || substr(md5(key), 14, 3) || '8' || substr(md5(key), 18, 15))::uuid
    $$`;
  for (let start = 1; start <= to; start += SEED_BATCH) {
    const end = Math.min(to, start + SEED_BATCH - 1);
    await sql.begin(async (tx) => {
      await tx`
        insert into research_plan (id, tenant_id, name, research_question, status,
          created_by_key_id, created_at, updated_at, completed_at)
        select bench_uuid('bench-plan-' || g), ${tenant.tenantId}::uuid, 'Seeded plan ' || g,
          'A seeded research question', 
          (case when g % ${EXECUTING_EVERY}::int = 0 then 'executing' else 'completed' end)::plan_status,
          ${tenant.apiKeyId}::uuid, now() - g * interval '1 minute', now() - g * interval '1 minute' + interval '30 seconds',
          case when g % ${EXECUTING_EVERY}::int = 0 then null else now() - g * interval '1 minute' + interval '30 seconds' end
        from generate_series(${start}::int, ${end}::int) g`;
      await tx`
        insert into plan_step (id, tenant_id, plan_id, step_order, step_type, instructions, status,
          result, result_summary, confidence, started_at, completed_at, created_at, updated_at)
        select bench_uuid('bench-step-' || g || '-' || s), ${tenant.tenantId}::uuid, bench_uuid('bench-plan-' || g),
          s, 'search', 'Seeded step ' || s || ': find the sources.', v.status::step_status,
          case when v.done then '{"sourceCount": 7, "findings": ["one", "two"]}'::jsonb end,
          case when v.done then 'Two sources agree.' end,
          case when v.done then 0.9 end,
          case when v.done then now() - g * interval '1 minute' end,
          case when v.done then now() - g * interval '1 minute' + interval '1 second' end,
          now() - g * interval '1 minute', now() - g * interval '1 minute'
        from generate_series(${start}::int, ${end}::int) g
        cross join generate_series(1, ${STEPS_PER_PLAN}::int) s
        cross join lateral (
          select (g % ${EXECUTING_EVERY}::int <> 0 or s <= 5) as done
        ) d
        cross join lateral (
          select d.done, case when d.done then 'completed' else 'pending' end as status
        ) v`;
      await tx`
        insert into plan_audit_log (tenant_id, plan_id, step_id, event_type, actor_type, actor_id,
          actor_label, payload, created_at)
        select ${tenant.tenantId}::uuid, bench_uuid('bench-plan-' || g), null::uuid, 'plan_modified'::audit_event_type, 'api_key'::actor_type,
          ${tenant.apiKeyId}::uuid, 'benchmark seed'::text,
          jsonb_build_object('action', 'created', 'stepCount', ${STEPS_PER_PLAN}::int),
          now() - g * interval '1 minute'
        from generate_series(${start}::int, ${end}::int) g
        union all
        select ${tenant.tenantId}::uuid, bench_uuid('bench-plan-' || g), bench_uuid('bench-step-' || g || '-' || s),
          e.event::audit_event_type, 'api_key'::actor_type, ${tenant.apiKeyId}::uuid, 'benchmark seed'::text,
          jsonb_build_object('stepOrder', s), now() - g * interval '1 minute'
        from generate_series(${start}::int, ${end}::int) g
        cross join generate_series(1, ${STEPS_PER_PLAN}::int) s
        cross join (values ('step_started'), ('step_completed')) e(event)
        where g % ${EXECUTING_EVERY}::int <> 0 or s <= 5`;
    });
  }
  // What autovacuum would have done on a database that grew over months.
  await sql`vacuum analyze research_plan, plan_step, plan_audit_log`;
}

/**
 * One size's database: `sql` seeds it with `plans` plans and counts its rows;
 * the calls are measured through a connection of the app's own client.
 */
export type ScaleDatabase = { url: string; sql: Sql; tenant: BenchTenant; plans: number };

type Measured = { ctx: ServiceContext; plans: number; claimOrder: number[] };

/** The claims of one database: over as many of its executing plans as there are, at random. */
function claimOrderOf(plans: number): number[] {
  const executing = Array.from(
    { length: Math.floor(plans / EXECUTING_EVERY) },
    (_, i) => (i + 1) * EXECUTING_EVERY,
  );
  const shuffled = executing.sort(() => Math.random() - 0.5);
  return Array.from(
    { length: NEXT_STEP_SAMPLES },
    (_, i) => shuffled[i % shuffled.length] as number,
  );
}

/** Every database's calls, one call on each in turn, so they share the machine's moments. */
async function measureSideBySide(databases: Measured[]) {
  const randomPlan = (plans: number) => seededPlanId(1 + Math.floor(Math.random() * plans));
  const status = databases.map(() => [] as number[]);
  const next = databases.map(() => [] as number[]);
  for (const { ctx, plans } of databases) {
    for (let i = 0; i < 20; i += 1) await getPlanStatus(ctx, { planId: randomPlan(plans) });
  }
  for (let i = 0; i < STATUS_SAMPLES; i += 1) {
    for (const [d, { ctx, plans }] of databases.entries()) {
      await timed(status[d] as number[], () => getPlanStatus(ctx, { planId: randomPlan(plans) }));
    }
  }
  for (let i = 0; i < NEXT_STEP_SAMPLES; i += 1) {
    for (const [d, { ctx, claimOrder }] of databases.entries()) {
      const g = claimOrder[i] as number;
      const answer = await timed(next[d] as number[], () =>
        getNextStep(ctx, { planId: seededPlanId(g) }),
      );
      if (answer.status !== "ready") throw new Error(`Seeded plan ${g} answered ${answer.status}.`);
    }
  }
  return databases.map((_, d) => ({
    getNextStep: summarise(next[d] as number[]),
    getPlanStatus: summarise(status[d] as number[]),
  }));
}

export async function runScale(databases: readonly ScaleDatabase[]): Promise<ScalePoint[]> {
  const seeded: (Omit<ScalePoint, "getNextStep" | "getPlanStatus"> & Measured)[] = [];
  const handles: DatabaseHandle[] = [];
  try {
    for (const { url, sql, tenant, plans } of databases) {
      const started = performance.now();
      await seed(sql, tenant, plans);
      const seedSeconds = Math.round((performance.now() - started) / 100) / 10;
      const [counts] = await sql<{ steps: number; audit: number }[]>`
        select (select count(*)::int from plan_step) as steps,
               (select count(*)::int from plan_audit_log) as audit`;
      const handle = await openDatabase({ kind: "postgres", url, maxConnections: 1 });
      handles.push(handle);
      seeded.push({
        plans,
        steps: counts?.steps ?? 0,
        auditRows: counts?.audit ?? 0,
        seedSeconds,
        ctx: {
          db: handle.db,
          tenantId: tenant.tenantId,
          actor: { type: "api_key", id: tenant.apiKeyId, label: "benchmark agent" },
          stallThresholdSeconds: 1800,
        },
        claimOrder: claimOrderOf(plans),
      });
    }
    const figures = await measureSideBySide(seeded);
    return seeded.map(({ ctx: _, claimOrder: __, ...point }, d) => ({
      ...point,
      ...(figures[d] as Pick<ScalePoint, "getNextStep" | "getPlanStatus">),
    }));
  } finally {
    await Promise.all(handles.map((handle) => handle.close()));
  }
}
