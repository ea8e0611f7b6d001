/**
 * Section 3, Cairn's core in process: the agents call the service functions
 * directly (no HTTP), each agent with its own connection, as the floor's
 * clients and pg-boss's workers have.
 */
import type { Sql } from "postgres";
import { openDatabase } from "@/lib/db/client";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type CairnCalls, type LoopRun, runOwnPlans, runSharedPlan } from "./support/agents";
import type { BenchTenant } from "./support/tenant";
import { type Verification, verifyRun } from "./support/verify";

export type CoreRun = Omit<LoopRun, "planIds"> & {
  kind: "own" | "shared";
  verification: Verification;
};

export const OWN_PLAN_STEPS = 10;
export const SHARED_PLAN_STEPS = 200;

export type CoreRunKind = { agents: number; kind: CoreRun["kind"] };

export async function runCore(
  url: string,
  tenant: BenchTenant,
  { agents, kind }: CoreRunKind,
  verifySql: Sql,
  durationMs: number,
): Promise<CoreRun> {
  const handle = await openDatabase({ kind: "postgres", url, maxConnections: agents });
  try {
    const ctx: ServiceContext = {
      db: handle.db,
      tenantId: tenant.tenantId,
      actor: { type: "api_key", id: tenant.apiKeyId, label: "benchmark agent" },
      stallThresholdSeconds: 1800,
    };
    const calls: CairnCalls = {
      createPlan: (input) => createPlan(ctx, input),
      getNextStep: (planId) => getNextStep(ctx, { planId }),
      submitStepResult: (input) => submitStepResult(ctx, input),
    };
    const team = Array.from({ length: agents }, () => calls);
    // A short unmeasured pass first, so JIT and the connection pool are warm.
    await runOwnPlans(team, OWN_PLAN_STEPS, 500);
    const run =
      kind === "own"
        ? await runOwnPlans(team, OWN_PLAN_STEPS, durationMs)
        : await runSharedPlan(team, SHARED_PLAN_STEPS, durationMs);
    const { planIds: _, ...figures } = run;
    return { kind, ...figures, verification: await verifyRun(verifySql, run) };
  } finally {
    await handle.close();
  }
}
