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
import { planSteps as typedSteps } from "./in-process";
import { connectAgent, plainResult, type ToolAnswer } from "./mcp-client";

export type PlanRun = {
  /** Plans acknowledged as created. */
  plans: string[];
  /** Results acknowledged, by step id: the token each carried. */
  results: Map<string, string>;
  /** Step ids handed out, once per acknowledged hand-out. */
  handOuts: string[];
  /** The text of every failed call (each was retried). */
  errors: string[];
  /** When each acknowledged write was answered (ms since the epoch). */
  writtenAt: number[];
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An answer; a 503 at the front door also says when to retry. */
type RunAnswer = ToolAnswer & { retryAfterMs?: number };
/** What runPlans needs of an agent, in process or over /api/mcp. */
export type RunAgent = { call(name: string, args: Record<string, unknown>): Promise<RunAnswer> };

/** Every HTTP status the agents of connectRetryingAgent were answered with. */
export type HttpAnswers = { statuses: number[]; retryAfter: (string | null)[] };

/**
 * An agent over /api/mcp (the 1.x SDK client) that meets the front door's
 * answer while the database is unavailable as an agent should: HTTP 503 with
 * Retry-After (the SDK throws it) is the retryable DATABASE_UNAVAILABLE,
 * retried after the seconds it names. Anything else the SDK throws (a 500, a
 * timeout) fails the run. Records every status into `seen`.
 */
export async function connectRetryingAgent(mcpUrl: string, key: string, seen: HttpAnswers) {
  /** The HTTP answers to the call under way. */
  const answers: Response[] = [];
  const agent = await connectAgent(mcpUrl, key, {
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      seen.statuses.push(response.status);
      if (response.status === 503) seen.retryAfter.push(response.headers.get("retry-after"));
      answers.push(response);
      return response;
    },
  });
  async function call(name: string, args: Record<string, unknown>): Promise<RunAnswer> {
    answers.length = 0;
    try {
      return await agent.call(name, args);
    } catch (error) {
      const last = answers.at(-1);
      const retryAfter = last?.status === 503 ? Number(last.headers.get("retry-after")) : 0;
      if (!(retryAfter > 0)) throw error;
      return {
        isError: true,
        text: `DATABASE_UNAVAILABLE: HTTP 503, Retry-After ${retryAfter}: ${String(error)}`,
        data: undefined,
        retryAfterMs: retryAfter * 1000,
      };
    }
  }
  return { call, close: () => agent.close() };
}

export function newPlanRun(): PlanRun {
  return { plans: [], results: new Map(), handOuts: [], errors: [], writtenAt: [] };
}

/**
 * `agents` agents, each running `plansEach` plans of `steps` steps to the end,
 * recording into `run` (the caller may watch it fill). A call failing with
 * DATABASE_UNAVAILABLE is retried every `retryMs` (or after the Retry-After of
 * a 503) until `giveUpMs` after its first failure, a plan created or a
 * result submitted read back first; any other failure fails the run. A plan whose step is still
 * held (a hand-out stored whose answer was lost) is asked again until its lease
 * runs out.
 */
export async function runPlans(
  agentFor: (index: number) => RunAgent,
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

  /**
   * The call's answer, retried while it fails with DATABASE_UNAVAILABLE. A
   * write so answered may have been stored after all (its commit was in
   * flight): as the error says, `readBack` reads it before it is repeated, and
   * what it finds (undefined: not stored) is the answer, `readBack` true.
   */
  async function retried(
    agent: RunAgent,
    name: string,
    args: Record<string, unknown>,
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the tool returned
    readBack?: () => Promise<any>,
    // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the tool returned
  ): Promise<{ data: any; readBack: boolean }> {
    let firstFailure: number | undefined;
    for (;;) {
      const answer = await agent.call(name, args);
      if (!answer.isError) return { data: answer.data, readBack: false };
      run.errors.push(answer.text);
      if (!answer.text.startsWith("DATABASE_UNAVAILABLE: ")) {
        throw new Error(
          `${name} failed with something else than a retryable error: ${answer.text}`,
        );
      }
      firstFailure ??= Date.now();
      if (Date.now() - firstFailure > giveUpMs)
        throw new Error(`${name} kept failing: ${answer.text}`);
      await sleep(answer.retryAfterMs ?? retryMs);
      const stored = await readBack?.();
      if (stored !== undefined) return { data: stored, readBack: true };
    }
  }

  async function agentRun(index: number) {
    const agent = agentFor(index);
    for (let p = 0; p < options.plansEach; p += 1) {
      const name = `Agent ${index} plan ${p}`;
      const created = await retried(
        agent,
        "create_research_plan",
        {
          name,
          researchQuestion: "q",
          steps: typedSteps(...Array.from({ length: options.steps }, () => "search")),
        },
        async () => {
          const { data } = await retried(agent, "list_active_plans", { limit: 100 });
          return data.plans.find((plan: { name: string }) => plan.name === name);
        },
      );
      const planId: string = created.data.planId;
      run.plans.push(planId);
      if (!created.readBack) run.writtenAt.push(Date.now());
      for (;;) {
        const { data: next } = await retried(agent, "get_next_step", { planId });
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
        const submitted = await retried(
          agent,
          "submit_step_result",
          plainResult(planId, stepId, { result: { token } }),
          async () => {
            const { data } = await retried(agent, "get_research_context", { planId });
            return data.steps.find(
              (step: { stepId: string; result: { token?: string } | null }) =>
                step.stepId === stepId && step.result?.token === token,
            );
          },
        );
        run.results.set(stepId, token);
        if (!submitted.readBack) run.writtenAt.push(Date.now());
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
