/**
 * Many agents running plans to the end, through the tools' use cases in process
 * or over /api/mcp, as the pooler and failover tests need them: every call the database could not serve
 * (DATABASE_UNAVAILABLE) is retried after a pause, and what Cairn acknowledged
 * (a plan created, a step handed out, a result taken) is recorded, to check
 * afterwards against what the database kept.
 */
import { inArray } from "drizzle-orm";
import { expect } from "vitest";
import type { Database } from "@/lib/db/client";
import { planSteps, researchPlans } from "@/lib/db/schema";
import { verifyAllTrails } from "@/lib/services/audit/audit-chain";
import { storedAuditProblems } from "./audit-replay";
import { type InProcessAgent, planSteps as typedSteps } from "./in-process";
import { plainResult } from "./mcp-client";

export type PlanRun = {
  /** Plans acknowledged as created. */
  plans: string[];
  /** Results acknowledged, by step id: the token each carried. */
  results: Map<string, string>;
  /** Step ids handed out, once per acknowledged hand-out. */
  handOuts: string[];
  /** The text of every call that failed (each was retried), but for the stored results below. */
  errors: string[];
  /** When each acknowledged write was answered (ms since the epoch). */
  writtenAt: number[];
  /** Results stored although their first answer was DATABASE_UNAVAILABLE (found on the retry). */
  storedBeforeAnswer: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function newPlanRun(): PlanRun {
  return {
    plans: [],
    results: new Map(),
    handOuts: [],
    errors: [],
    writtenAt: [],
    storedBeforeAnswer: 0,
  };
}

/**
 * `agents` agents, each running `plansEach` plans of `steps` steps to the end,
 * recording into `run` (the caller may watch it fill). A call failing with
 * DATABASE_UNAVAILABLE is retried every `retryMs` until `giveUpMs` after its
 * first failure; any other failure fails the run. A plan whose step is still
 * held (a hand-out stored whose answer was lost) is asked again until its lease
 * runs out.
 */
export async function runPlans(
  agentFor: (index: number) => Pick<InProcessAgent, "call">,
  options: {
    agents: number;
    plansEach: number;
    steps: number;
    retryMs?: number;
    giveUpMs?: number;
  },
  run: PlanRun = newPlanRun(),
): Promise<PlanRun> {
  const { retryMs = 100, giveUpMs = 60_000 } = options;

  async function retried(
    agent: Pick<InProcessAgent, "call">,
    name: string,
    args: Record<string, unknown>,
  ) {
    let firstFailure: number | undefined;
    for (;;) {
      const answer = await agent.call(name, args);
      if (!answer.isError) return answer.data;
      // A result whose answer was lost may have been stored (the error says to
      // read it back): then the retry is told so, and expectEverythingKept
      // checks that what was stored is this result.
      if (
        firstFailure !== undefined &&
        name === "submit_step_result" &&
        answer.text.startsWith("CONFLICT: ") &&
        answer.text.includes("is already completed")
      ) {
        run.storedBeforeAnswer += 1;
        return undefined;
      }
      run.errors.push(answer.text);
      if (!answer.text.startsWith("DATABASE_UNAVAILABLE: ")) {
        throw new Error(
          `${name} failed with something else than a retryable error: ${answer.text}`,
        );
      }
      firstFailure ??= Date.now();
      if (Date.now() - firstFailure > giveUpMs)
        throw new Error(`${name} kept failing: ${answer.text}`);
      await sleep(retryMs);
    }
  }

  async function agentRun(index: number) {
    const agent = agentFor(index);
    for (let p = 0; p < options.plansEach; p += 1) {
      const { planId } = await retried(agent, "create_research_plan", {
        name: `Agent ${index} plan ${p}`,
        researchQuestion: "q",
        steps: typedSteps(...Array.from({ length: options.steps }, () => "search")),
      });
      run.plans.push(planId);
      run.writtenAt.push(Date.now());
      for (;;) {
        const next = await retried(agent, "get_next_step", { planId });
        if (next.status === "plan_complete") break;
        if (next.status === "no_pending_steps" && next.inProgressCount > 0) {
          await sleep(retryMs);
          continue;
        }
        if (next.status !== "ready" || !next.step) throw new Error(`${planId}: ${next.status}`);
        const stepId: string = next.step.stepId;
        run.handOuts.push(stepId);
        run.writtenAt.push(Date.now());
        const token = `${index}-${p}-${stepId}`;
        await retried(
          agent,
          "submit_step_result",
          plainResult(planId, stepId, { result: { token } }),
        );
        run.results.set(stepId, token);
        run.writtenAt.push(Date.now());
      }
    }
  }

  await Promise.all(Array.from({ length: options.agents }, (_, i) => agentRun(i)));
  return run;
}

/**
 * What the database kept against what was acknowledged: every plan exists and
 * completed, every result is stored as it was sent, no step was handed out
 * twice, and every trail replays against its steps and verifies.
 */
export async function expectEverythingKept(db: Database, run: PlanRun, steps: number) {
  const plans = await db
    .select({ id: researchPlans.id, status: researchPlans.status })
    .from(researchPlans)
    .where(inArray(researchPlans.id, run.plans));
  expect(plans.length).toBe(run.plans.length);
  expect(plans.filter((plan) => plan.status !== "completed")).toEqual([]);

  const stored = await db
    .select({ id: planSteps.id, result: planSteps.result })
    .from(planSteps)
    .where(inArray(planSteps.planId, run.plans));
  expect(stored.length).toBe(run.plans.length * steps);
  const lost = [...run.results].filter(
    ([stepId, token]) =>
      (stored.find((step) => step.id === stepId)?.result as { token?: string } | null)?.token !==
      token,
  );
  expect(lost).toEqual([]);
  expect(new Set(run.handOuts).size).toBe(run.handOuts.length);

  expect(await storedAuditProblems(db, run.plans)).toEqual({});
  const unverified = (await verifyAllTrails(db)).filter((trail) => !trail.verified);
  expect(unverified).toEqual([]);
}
