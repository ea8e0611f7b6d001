/**
 * The correctness checks of a loop run, read back from the database after the
 * run: every step handed out and completed exactly once, every plan completed,
 * and one audit row per transition (over MCP also one tool-call log row per
 * call, checked in mcp.ts). A violation fails the benchmark.
 */
import type { Sql } from "postgres";
import type { LoopRun } from "./agents";

export type Verification = {
  plans: number;
  completedPlans: number;
  steps: number;
  completedSteps: number;
  auditRows: number;
  /** 1 plan_modified/created per plan + step_started and step_completed per step. */
  expectedAuditRows: number;
  violations: string[];
};

export async function verifyRun(sql: Sql, run: LoopRun): Promise<Verification> {
  const ids = run.planIds;
  const [plans] = await sql<{ plans: number; completed: number }[]>`
    select count(*)::int as plans, count(*) filter (where status = 'completed')::int as completed
    from research_plan where id = any(${ids}::uuid[])`;
  const [steps] = await sql<{ steps: number; completed: number }[]>`
    select count(*)::int as steps, count(*) filter (where status = 'completed')::int as completed
    from plan_step where plan_id = any(${ids}::uuid[])`;
  const [audit] = await sql<{ rows: number }[]>`
    select count(*)::int as rows from plan_audit_log where plan_id = any(${ids}::uuid[])`;
  // Per step: exactly one start and one completion in the trail.
  const [badSteps] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select s.id,
        count(a.id) filter (where a.event_type = 'step_started') as started,
        count(a.id) filter (where a.event_type = 'step_completed') as completed
      from plan_step s
      left join plan_audit_log a on a.step_id = s.id
      where s.plan_id = any(${ids}::uuid[])
      group by s.id
    ) t where started <> 1 or completed <> 1`;
  const [badPlans] = await sql<{ n: number }[]>`
    select count(*)::int as n from (
      select p.id, count(a.id) as created
      from research_plan p
      left join plan_audit_log a
        on a.plan_id = p.id and a.event_type = 'plan_modified' and a.payload->>'action' = 'created'
      where p.id = any(${ids}::uuid[])
      group by p.id
    ) t where created <> 1`;

  const counts = {
    plans: plans?.plans ?? 0,
    completedPlans: plans?.completed ?? 0,
    steps: steps?.steps ?? 0,
    completedSteps: steps?.completed ?? 0,
    auditRows: audit?.rows ?? 0,
  };
  const expectedAuditRows = counts.plans + 2 * counts.steps;
  const violations: string[] = [];
  if (counts.plans !== ids.length) violations.push(`${ids.length - counts.plans} plan(s) missing`);
  if (counts.completedPlans !== counts.plans) {
    violations.push(`${counts.plans - counts.completedPlans} plan(s) not completed`);
  }
  if (counts.completedSteps !== counts.steps) {
    violations.push(`${counts.steps - counts.completedSteps} step(s) not completed`);
  }
  if (counts.steps !== run.plans * run.stepsPerPlan) {
    violations.push(`${counts.steps} steps stored, ${run.plans * run.stepsPerPlan} created`);
  }
  if (run.steps !== counts.steps) {
    violations.push(`agents completed ${run.steps} steps, the database holds ${counts.steps}`);
  }
  if (run.duplicateHandOuts > 0) {
    violations.push(`${run.duplicateHandOuts} step(s) handed out more than once`);
  }
  if ((badSteps?.n ?? 0) > 0) {
    violations.push(
      `${badSteps?.n} step(s) without exactly one start and one completion audit row`,
    );
  }
  if ((badPlans?.n ?? 0) > 0) violations.push(`${badPlans?.n} plan(s) without one creation row`);
  if (counts.auditRows !== expectedAuditRows) {
    violations.push(`${counts.auditRows} audit rows for ${expectedAuditRows} transitions`);
  }
  return { ...counts, expectedAuditRows, violations };
}
