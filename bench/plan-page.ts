/**
 * Section 5, the plan page: a plan of 200 steps with 10,000 audit rows, read by
 * a signed-in person from the production server. Measured as the whole response
 * on loopback (the page is rendered on the server and sent at once), so the
 * figure is the server's render time plus a loopback transfer.
 */
import type { Sql } from "postgres";
import { type LatencySummary, summarise, timed } from "./support/stats";
import type { BenchTenant } from "./support/tenant";

export const PLAN_PAGE_STEPS = 200;
export const PLAN_PAGE_AUDIT_ROWS = 10_000;
const SAMPLES = 30;

async function seedPlan(sql: Sql, tenant: BenchTenant): Promise<string> {
  const [plan] = await sql<{ id: string }[]>`
    insert into research_plan (tenant_id, name, research_question, status, created_by_key_id)
    values (${tenant.tenantId}, 'Benchmark plan page', 'How fast does a big plan render?', 'executing', ${tenant.apiKeyId})
    returning id`;
  if (!plan) throw new Error("The plan-page plan was not created.");
  await sql`
    insert into plan_step (tenant_id, plan_id, step_order, step_type, instructions, status,
      result, result_summary, confidence, step_execution_report, started_at, completed_at)
    select ${tenant.tenantId}, ${plan.id}, g, 'analyze', 'Analyse part ' || g || ' of the question.',
      (case when g <= 150 then 'completed' else 'pending' end)::step_status,
      case when g <= 150 then jsonb_build_object('part', g, 'finding', repeat('text ', 40)) end,
      case when g <= 150 then 'Part ' || g || ' analysed.' end,
      case when g <= 150 then 0.8 end,
      case when g <= 150 then jsonb_build_object('thinking', 'Thought about it.', 'webSearches', '[]'::jsonb,
        'webFetches', '[]'::jsonb, 'otherToolCalls', '[]'::jsonb, 'subagents', '[]'::jsonb) end,
      case when g <= 150 then now() - interval '2 hours' + g * interval '20 seconds' end,
      case when g <= 150 then now() - interval '2 hours' + g * interval '20 seconds' + interval '15 seconds' end
    from generate_series(1, ${PLAN_PAGE_STEPS}) as g`;
  await sql`
    insert into plan_audit_log (tenant_id, plan_id, event_type, actor_type, actor_id, actor_label, payload, created_at)
    select ${tenant.tenantId}, ${plan.id},
      (array['step_started','step_completed','plan_modified','session_resumed'])[1 + g % 4]::audit_event_type,
      'api_key', ${tenant.apiKeyId}, 'bench key', jsonb_build_object('n', g),
      now() - interval '2 hours' + g * interval '0.5 seconds'
    from generate_series(1, ${PLAN_PAGE_AUDIT_ROWS}) as g`;
  return plan.id;
}

/** Signs in through Auth.js's credentials flow and returns the session cookie header. */
async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const response = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: csrfCookie },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${baseUrl}/plans` }),
  });
  const session = response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .find((c) => c?.includes("session-token"));
  if (!session)
    throw new Error(`Signing in for the plan-page figure failed (HTTP ${response.status}).`);
  return session;
}

export async function runPlanPage(
  baseUrl: string,
  sql: Sql,
  tenant: BenchTenant,
  account: { email: string; password: string },
): Promise<LatencySummary> {
  const planId = await seedPlan(sql, tenant);
  const cookie = await signIn(baseUrl, account.email, account.password);
  const load = async () => {
    const response = await fetch(`${baseUrl}/plans/${planId}`, { headers: { Cookie: cookie } });
    const html = await response.text();
    if (response.status !== 200 || !html.includes("Benchmark plan page")) {
      throw new Error(`The plan page answered ${response.status} without the plan.`);
    }
  };
  for (let warm = 0; warm < 3; warm++) await load();
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) await timed(samples, load);
  return summarise(samples);
}
