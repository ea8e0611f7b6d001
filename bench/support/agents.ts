/**
 * Simulated agents running Cairn's loop: create a plan, then get_next_step /
 * submit_step_result until the plan is complete. The same loop runs in process
 * (service functions) and over MCP, through one small interface.
 */
import type { CreatePlanInput } from "@/lib/services/plans/create-plan";
import type { NextStep } from "@/lib/services/plans/next-step-output";
import { type LatencySummary, round, sleep, summarise, timed } from "./stats";
import { planInput, submitInput } from "./workload";

export type CairnCalls = {
  createPlan(input: CreatePlanInput): Promise<{ planId: string }>;
  getNextStep(planId: string): Promise<NextStep>;
  submitStepResult(input: ReturnType<typeof submitInput>): Promise<{ planStatus: string }>;
};

export type LoopRun = {
  agents: number;
  stepsPerPlan: number;
  plans: number;
  steps: number;
  /** Every tool call: creates, next steps (including the final plan_complete) and submits. */
  calls: number;
  elapsedMs: number;
  stepsPerSecond: number;
  callsPerSecond: number;
  latency: {
    createPlan: LatencySummary;
    getNextStep: LatencySummary;
    submitStepResult: LatencySummary;
    /** get_next_step that handed out a step plus its submit_step_result. */
    step: LatencySummary;
  };
  /** Steps handed out more than once (must be 0). */
  duplicateHandOuts: number;
  planIds: string[];
};

type Samples = {
  createPlan: number[];
  getNextStep: number[];
  submitStepResult: number[];
  step: number[];
};

class Recorder {
  readonly samples: Samples = { createPlan: [], getNextStep: [], submitStepResult: [], step: [] };
  readonly planIds: string[] = [];
  readonly handedOut = new Set<string>();
  duplicates = 0;
  steps = 0;
  calls = 0;

  async create(calls: CairnCalls, name: string, stepCount: number): Promise<string> {
    this.calls += 1;
    const { planId } = await timed(this.samples.createPlan, () =>
      calls.createPlan(planInput(name, stepCount)),
    );
    this.planIds.push(planId);
    return planId;
  }

  /** One turn of the loop; answers what get_next_step said. */
  async turn(calls: CairnCalls, planId: string): Promise<NextStep["status"]> {
    const started = performance.now();
    this.calls += 1;
    const next = await timed(this.samples.getNextStep, () => calls.getNextStep(planId));
    if (next.status === "plan_failed" || next.status === "awaiting_review") {
      throw new Error(`Plan ${planId} answered ${next.status}; the benchmark plan never should.`);
    }
    if (next.status !== "ready") return next.status;
    if (this.handedOut.has(next.step.stepId)) this.duplicates += 1;
    this.handedOut.add(next.step.stepId);
    this.calls += 1;
    await timed(this.samples.submitStepResult, () =>
      calls.submitStepResult(submitInput(planId, next.step.stepId, next.step.stepOrder)),
    );
    this.samples.step.push(performance.now() - started);
    this.steps += 1;
    return "ready";
  }

  result(agents: number, stepsPerPlan: number, elapsedMs: number): LoopRun {
    return {
      agents,
      stepsPerPlan,
      plans: this.planIds.length,
      steps: this.steps,
      calls: this.calls,
      elapsedMs: round(elapsedMs, 0),
      stepsPerSecond: round((this.steps / elapsedMs) * 1000, 1),
      callsPerSecond: round((this.calls / elapsedMs) * 1000, 1),
      latency: {
        createPlan: summarise(this.samples.createPlan),
        getNextStep: summarise(this.samples.getNextStep),
        submitStepResult: summarise(this.samples.submitStepResult),
        step: summarise(this.samples.step),
      },
      duplicateHandOuts: this.duplicates,
      planIds: this.planIds,
    };
  }
}

/** Each agent runs plans of `stepsPerPlan` steps to completion while `more()` says so. */
async function ownPlans(
  agents: readonly CairnCalls[],
  stepsPerPlan: number,
  recorder: Recorder,
  more: () => boolean,
): Promise<void> {
  await Promise.all(
    agents.map(async (calls, agent) => {
      while (more()) {
        const planId = await recorder.create(calls, `Bench agent ${agent}`, stepsPerPlan);
        for (;;) {
          const status = await recorder.turn(calls, planId);
          if (status === "plan_complete") break;
          if (status !== "ready") throw new Error(`Own plan ${planId} answered ${status}.`);
        }
      }
    }),
  );
}

/**
 * Each agent creates a plan of `stepsPerPlan` steps, runs it to completion and
 * starts another until `durationMs` has passed; a plan begun is always finished,
 * so every plan of the run must end completed.
 */
export async function runOwnPlans(
  agents: readonly CairnCalls[],
  stepsPerPlan: number,
  durationMs: number,
): Promise<LoopRun> {
  const recorder = new Recorder();
  const started = performance.now();
  const deadline = started + durationMs;
  await ownPlans(agents, stepsPerPlan, recorder, () => performance.now() < deadline);
  return recorder.result(agents.length, stepsPerPlan, performance.now() - started);
}

/**
 * One agent runs plans to completion until it has made at least `calls` calls
 * (a fixed amount of work, for CPU per call); answers the calls it made.
 */
export async function runOwnPlanCalls(
  agent: CairnCalls,
  stepsPerPlan: number,
  calls: number,
): Promise<number> {
  const recorder = new Recorder();
  await ownPlans([agent], stepsPerPlan, recorder, () => recorder.calls < calls);
  return recorder.calls;
}

const STUCK_AFTER_MS = 10_000;

/**
 * All agents pull from one plan of `stepsPerPlan` steps until it is complete,
 * then from a fresh one, until `durationMs` has passed. An agent told
 * no_pending_steps (the others hold the last steps) waits a millisecond and asks again.
 */
export async function runSharedPlan(
  agents: readonly CairnCalls[],
  stepsPerPlan: number,
  durationMs: number,
): Promise<LoopRun> {
  const recorder = new Recorder();
  const started = performance.now();
  const deadline = started + durationMs;
  const [first] = agents;
  if (!first) throw new Error("No agents.");
  while (performance.now() < deadline) {
    const planId = await recorder.create(first, "Bench shared plan", stepsPerPlan);
    let lastProgress = performance.now();
    await Promise.all(
      agents.map(async (calls) => {
        for (;;) {
          const status = await recorder.turn(calls, planId);
          if (status === "plan_complete") return;
          if (status === "ready") lastProgress = performance.now();
          // A plan whose steps are all done but which never completes would
          // otherwise keep the agents asking forever.
          if (performance.now() - lastProgress > STUCK_AFTER_MS) {
            throw new Error(`Shared plan ${planId} hands out nothing and never completes.`);
          }
          if (status === "no_pending_steps") await sleep(1);
        }
      }),
    );
  }
  return recorder.result(agents.length, stepsPerPlan, performance.now() - started);
}
