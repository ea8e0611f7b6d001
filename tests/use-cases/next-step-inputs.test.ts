/**
 * get_next_step resolves a handed-out step's inputs from the results of the
 * steps they bind, not from every step's result (docs/security.md,
 * "2026-11-29"): on PGlite and PostgreSQL, the bytes the database sends while
 * one step is handed out grow with what its bindings name, not with the plan.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/databases";
import {
  extractStep,
  type InProcessAgent,
  inProcessAgent,
  tenantContext,
} from "../support/in-process";
import { report } from "../support/mcp-client";
import { bytesDuring, type MeteredDatabase, meteredDatabase } from "../support/metered-database";

/** Steps before the bound one, each leaving a result of about 100 KB. */
const EARLIER = 8;
const RESULT_CHARS = 100_000;

describe.each(BACKENDS)("a handed-out step's inputs on %s", (backend) => {
  let metered: MeteredDatabase;
  let agent: InProcessAgent;

  beforeAll(async () => {
    metered = await meteredDatabase(backend);
    agent = inProcessAgent(await tenantContext(metered.db, "Alpha"));
  }, 120_000);
  afterAll(async () => {
    await metered?.close();
  });

  const earlierSteps = Array.from({ length: EARLIER }, (_, i) => ({
    stepType: "analyze",
    instructions: `Step ${i + 1}.`,
  }));
  /** Completes the plan's first EARLIER steps, each with a result of about 100 KB. */
  async function completeEarlier(planId: string) {
    for (let i = 0; i < EARLIER; i += 1) {
      const next = (await agent.ok("get_next_step", { planId })) as { step: { stepId: string } };
      await agent.ok("submit_step_result", {
        planId,
        stepId: next.step.stepId,
        result: { n: i + 1, topic: `topic ${i + 1}`, long: "x".repeat(RESULT_CHARS) },
        stepExecutionReport: report,
      });
    }
  }

  it("reads the results its bindings name, not every earlier step's", async () => {
    const plan = (await agent.ok("create_research_plan", {
      name: "Many long results",
      researchQuestion: "q",
      steps: [
        ...earlierSteps,
        {
          stepType: "analyze",
          instructions: "Read the last.",
          inputs: { last: "{{steps.8.result.n}}" },
        },
      ],
    })) as { planId: string };
    await completeEarlier(plan.planId);
    let handed: { step: { stepOrder: number; inputs: unknown } } | undefined;
    const read = await bytesDuring(metered, async () => {
      handed = (await agent.ok("get_next_step", { planId: plan.planId })) as typeof handed;
    });
    expect(handed?.step).toMatchObject({ stepOrder: EARLIER + 1, inputs: { last: 8 } });
    console.info(`${backend}: handing out the bound step read ${read} bytes`);
    // One bound result and the claim's own rows: every earlier result was
    // read before (about 800 KB).
    expect(read).toBeLessThan(2 * RESULT_CHARS + 64 * 1024);
  }, 120_000);

  // A run of server steps holds the plan exclusively: with a server step next
  // and on every get_next_step of a paused plan (an agent polls it). It read
  // every step's result for its bindings, here about 800 KB a call, up to
  // 200 of 128 KB; now the results that open steps' bindings name.
  it("runs server steps and answers a paused plan reading only the results bindings name", async () => {
    const plan = (await agent.ok("create_research_plan", {
      name: "Server steps among long results",
      researchQuestion: "q",
      steps: [
        ...earlierSteps,
        {
          stepType: "search",
          instructions: "Search for step 3's topic.",
          tool: "search_sources",
          // Spaces and a leading zero: the one grammar (findBindings) reads both.
          arguments: { query: "{{ steps.03.result.topic }}", limit: 5 },
        },
        {
          stepType: "analyze",
          instructions: "Read two results.",
          inputs: { last: "{{steps.8.result.n}}", label: "step {{steps.2.result.n}} of 8" },
        },
        extractStep,
        {
          stepType: "synthesize",
          instructions: "Write it up.",
          inputs: { from: "{{steps.8.result.n}}" },
        },
      ],
    })) as { planId: string };
    await completeEarlier(plan.planId);
    let handed:
      | { step: { stepId: string; stepOrder: number; inputs: unknown }; serverSteps?: unknown }
      | undefined;
    const ran = await bytesDuring(metered, async () => {
      handed = (await agent.ok("get_next_step", { planId: plan.planId })) as typeof handed;
    });
    expect(handed?.serverSteps).toEqual([
      expect.objectContaining({ stepOrder: EARLIER + 1, status: "completed" }),
    ]);
    expect(handed?.step).toMatchObject({
      stepOrder: EARLIER + 2,
      inputs: { last: 8, label: "step 2 of 8" },
    });
    console.info(`${backend}: a run of one server step read ${ran} bytes`);
    // The three bound results (steps 2, 3 and 8) and the run's own rows.
    expect(ran).toBeLessThan(3 * RESULT_CHARS + 64 * 1024);

    // The extraction fails (no model here) and pauses the plan on it.
    await agent.submit(plan.planId, handed?.step.stepId ?? "", { result: { done: true } });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused.pauseReason).toMatchObject({ type: "tool_error", stepOrder: EARLIER + 3 });
    const polled = await bytesDuring(metered, async () => {
      const again = await agent.ok("get_next_step", { planId: plan.planId });
      expect(again.pauseReason).toMatchObject({ type: "tool_error", stepOrder: EARLIER + 3 });
    });
    console.info(`${backend}: a paused plan's get_next_step read ${polled} bytes`);
    // Paused on a tool error, nothing runs or is handed out: no result is
    // read, though the open step after it binds step 8's.
    expect(polled).toBeLessThan(64 * 1024);
  }, 120_000);

  // A pause is stored on the plan and answered by every get_next_step and
  // get_plan_status: 49 copies of a 120 KB result in it answered about 6 MB.
  it("pauses a server step whose arguments would be too large once bound with them as written", async () => {
    const plan = (await agent.ok("create_research_plan", {
      name: "A large pause",
      researchQuestion: "q",
      steps: [
        { stepType: "analyze", instructions: "Write a long text." },
        {
          stepType: "analyze",
          instructions: "Store it.",
          tool: "store_research",
          arguments: {
            artifactType: "finding",
            title: "Long",
            contentText: "The long text.",
            confidence: 0.8,
            content: {
              ...Object.fromEntries(
                Array.from({ length: 49 }, (_, i) => [`copy${i}`, "{{steps.1.result}}"]),
              ),
              missing: "{{steps.1.result.nope}}",
            },
          },
        },
      ],
    })) as { planId: string };
    const first = (await agent.ok("get_next_step", { planId: plan.planId })) as {
      step: { stepId: string };
    };
    await agent.submit(plan.planId, first.step.stepId, { result: { long: "x".repeat(120_000) } });
    const paused = await agent.ok("get_next_step", { planId: plan.planId });
    expect(paused).toMatchObject({
      status: "paused",
      pauseReason: { type: "unresolvable_params" },
    });
    expect(paused.pauseReason?.suggestedTool?.arguments.content).toMatchObject({
      copy0: "{{steps.1.result}}",
      missing: "{{steps.1.result.nope}}",
    });
    expect(JSON.stringify(paused).length).toBeLessThan(64 * 1024);
    const status = await agent.ok("get_plan_status", { planId: plan.planId });
    expect(JSON.stringify(status).length).toBeLessThan(64 * 1024);
  }, 120_000);
});
