/**
 * The size limits of what an agent supplies that people see or the audit trail
 * copies (docs/execution-loop.md, "Size limits"): each refusal is a
 * VALIDATION_ERROR naming the field, its size and the limit, and changes
 * nothing; a value at the limit is accepted. A step may be put up for review at
 * most MAX_REVIEWS_PER_STEP times (docs/reviews.md). In process, on PGlite and
 * on PostgreSQL 15.
 */
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { MAX_REVIEWS_PER_STEP } from "@/lib/services/reviews/review-limits";
import {
  MAX_ACTION_PARAMS_BYTES,
  MAX_REPORT_LIST_BYTES,
  MAX_RESULT_BYTES,
  MAX_STEP_IO_BYTES,
} from "@/lib/services/shared/fields";
import { BACKENDS } from "../support/databases";
import { planSteps, useFreshTenant } from "../support/in-process";
import { plainResult } from "../support/mcp-client";
import { readRows } from "../support/rows";

/** An object whose JSON text (`{"text":"…"}`) is exactly `bytes` long. */
const jsonOfBytes = (bytes: number) => ({ text: "x".repeat(bytes - '{"text":""}'.length) });

/** The error's pattern: the field, its size and the limit, in bytes. */
const tooBig = (field: string, bytes: number, limit: number) =>
  new RegExp(
    `^VALIDATION_ERROR: ${field.replaceAll(".", "\\.")}: is ${bytes.toLocaleString("en-US")} bytes \\(\\d+ KB\\) as JSON text, over the limit of ${limit.toLocaleString("en-US")} bytes`,
  );

describe.each(BACKENDS)("input size limits on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  async function stepInProgress() {
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Sizes",
      researchQuestion: "q",
      steps: planSteps("analyze", "synthesize"),
    });
    const next = await tenant.agent.ok("get_next_step", { planId: created.planId });
    return { planId: created.planId as string, stepId: next.step.stepId as string };
  }

  async function reviewCount(planId: string) {
    const status = await tenant.agent.ok("get_research_context", { planId, sessionId: "s" });
    return status.reviews.length as number;
  }

  it("a proposed result over the limit is refused, naming its size; one at the limit is kept", async () => {
    const { planId, stepId } = await stepInProgress();
    const over = MAX_RESULT_BYTES + 1;
    const refused = await tenant.agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "Check.",
      proposedResult: jsonOfBytes(over),
    });
    expect(refused).toMatch(tooBig("proposedResult", over, MAX_RESULT_BYTES));
    expect(refused).toContain("store_research");
    expect(await reviewCount(planId)).toBe(0);
    const kept = await tenant.agent.ok("request_user_review", {
      planId,
      stepId,
      summary: "Check.",
      proposedResult: jsonOfBytes(MAX_RESULT_BYTES),
    });
    expect(kept.stepStatus).toBe("awaiting_input");
  });

  it("a proposal's size counts UTF-8 bytes, not characters", async () => {
    const { planId, stepId } = await stepInProgress();
    // 40,000 characters of "é" are 80,000 bytes, plus the quotes and key.
    const text = "é".repeat(MAX_RESULT_BYTES / 2);
    const refused = await tenant.agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "Check.",
      proposedResult: { text },
    });
    expect(refused).toMatch(/^VALIDATION_ERROR: proposedResult: is /);
  });

  it("the summary, the questions and the feedback keep their limits", async () => {
    const { planId, stepId } = await stepInProgress();
    expect(
      await tenant.agent.fails("request_user_review", {
        planId,
        stepId,
        summary: "s".repeat(20_001),
      }),
    ).toMatch(/^VALIDATION_ERROR: summary: .*20000/);
    expect(
      await tenant.agent.fails("request_user_review", {
        planId,
        stepId,
        summary: "Check.",
        questions: ["q".repeat(2_001)],
      }),
    ).toMatch(/^VALIDATION_ERROR: questions\.0: .*2000/);
    expect(
      await tenant.agent.fails("request_user_review", {
        planId,
        stepId,
        summary: "Check.",
        questions: Array.from({ length: 11 }, (_, i) => `Question ${i}?`),
      }),
    ).toMatch(/^VALIDATION_ERROR: questions: .*10/);
    const review = await tenant.agent.ok("request_user_review", { planId, stepId, summary: "Ok?" });
    expect(
      await tenant.agent.fails("submit_user_decision", {
        planId,
        reviewRequestId: review.reviewRequestId,
        decision: "modify",
        feedback: "f".repeat(20_001),
      }),
    ).toMatch(/^VALIDATION_ERROR: feedback: .*20000/);
  });

  it("a step's result and each list of its execution report have limits", async () => {
    const { planId, stepId } = await stepInProgress();
    const over = MAX_RESULT_BYTES + 1;
    expect(
      await tenant.agent.fails(
        "submit_step_result",
        plainResult(planId, stepId, { result: jsonOfBytes(over) }),
      ),
    ).toMatch(tooBig("result", over, MAX_RESULT_BYTES));
    const list = ["y".repeat(MAX_REPORT_LIST_BYTES)];
    const listBytes = MAX_REPORT_LIST_BYTES + 4;
    const refused = await tenant.agent.fails(
      "submit_step_result",
      plainResult(planId, stepId, {
        stepExecutionReport: {
          thinking: "t",
          webSearches: [],
          webFetches: list,
          otherToolCalls: [],
          subagents: [],
        },
      }),
    );
    expect(refused).toMatch(
      tooBig("stepExecutionReport.webFetches", listBytes, MAX_REPORT_LIST_BYTES),
    );
    // Nothing was written: the step is still the agent's to submit.
    const submitted = await tenant.agent.submit(planId, stepId, {
      result: jsonOfBytes(MAX_RESULT_BYTES),
    });
    expect(submitted.stepStatus).toBe("completed");
  });

  it("a step's arguments, inputs and outputSchema, and a condition's actionParams, have limits", async () => {
    const over = MAX_STEP_IO_BYTES + 1;
    for (const field of ["inputs", "outputSchema"] as const) {
      expect(
        await tenant.agent.fails("create_research_plan", {
          name: "Big",
          researchQuestion: "q",
          steps: [{ stepType: "analyze", instructions: "Do.", [field]: jsonOfBytes(over) }],
        }),
      ).toMatch(tooBig(`steps.0.${field}`, over, MAX_STEP_IO_BYTES));
    }
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "Big",
        researchQuestion: "q",
        steps: [
          {
            stepType: "search",
            instructions: "Search.",
            tool: "search_sources",
            arguments: jsonOfBytes(over),
          },
        ],
      }),
    ).toMatch(tooBig("steps.0.arguments", over, MAX_STEP_IO_BYTES));
    const paramsOver = MAX_ACTION_PARAMS_BYTES + 1;
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "Big",
        researchQuestion: "q",
        steps: planSteps("analyze", "synthesize"),
        branchingConditions: [
          {
            afterStepOrder: 1,
            conditionExpression: "confidence > 0.5",
            ifTrueAction: "add_steps",
            actionParams: jsonOfBytes(paramsOver),
          },
        ],
      }),
    ).toMatch(tooBig("branchingConditions.0.actionParams", paramsOver, MAX_ACTION_PARAMS_BYTES));
    // modify_plan's add_steps shares the step's fields.
    const { planId } = await stepInProgress();
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "add_steps",
        modificationRationale: "More.",
        steps: [{ stepType: "analyze", instructions: "Do.", inputs: jsonOfBytes(over) }],
      }),
    ).toMatch(tooBig("steps.0.inputs", over, MAX_STEP_IO_BYTES));
  });

  it(`a step is put up for review at most ${MAX_REVIEWS_PER_STEP} times`, async () => {
    const { planId, stepId } = await stepInProgress();
    for (let i = 0; i < MAX_REVIEWS_PER_STEP; i += 1) {
      const review = await tenant.agent.ok("request_user_review", {
        planId,
        stepId,
        summary: `Round ${i + 1}.`,
      });
      await tenant.agent.ok("submit_user_decision", {
        planId,
        reviewRequestId: review.reviewRequestId,
        decision: "modify",
        feedback: `Again (${i + 1}).`,
      });
    }
    const refused = await tenant.agent.fails("request_user_review", {
      planId,
      stepId,
      summary: "Once more.",
    });
    expect(refused).toMatch(
      new RegExp(
        `^CONFLICT: Step 1 has been put up for review ${MAX_REVIEWS_PER_STEP} times, the most one step may be \\(${MAX_REVIEWS_PER_STEP}\\); nothing was changed\\. Finish it with submit_step_result`,
      ),
    );
    expect(await reviewCount(planId)).toBe(MAX_REVIEWS_PER_STEP);
    // The step is still the agent's: it finishes it with a result.
    expect((await tenant.agent.submit(planId, stepId)).stepStatus).toBe("completed");
  });

  it("a plan's steps together have a limit, checked by every change that adds to them; a plan over it may still shrink", async () => {
    const refusedTotal =
      /^VALIDATION_ERROR: steps: the plan's steps would hold [\d,]+ bytes of instructions, arguments, inputs and output schemas together, over the limit of 1,048,576 bytes \(1 MB\) a plan; keep instructions to what the step needs, and store long material with store_research/;
    const long = (i: number) => ({
      stepType: "analyze",
      instructions: `Step ${i}: `.padEnd(20_000, "w"),
    });
    const plans = async () =>
      (
        await readRows<{ n: number }>(
          tenant.handle.db,
          sql`select count(*)::int as n from research_plan`,
        )
      )[0]?.n ?? 0;
    const before = await plans();
    // 53 steps of 20,000 characters: 1,060,106 bytes of JSON text, over the 1 MB (1,048,576) a plan holds.
    expect(
      await tenant.agent.fails("create_research_plan", {
        name: "Too long",
        researchQuestion: "q",
        steps: Array.from({ length: 53 }, (_, i) => long(i + 1)),
      }),
    ).toMatch(refusedTotal);
    expect(await plans()).toBe(before);

    // 52 long steps and a short one: 1,040,113 bytes of JSON text, within the limit.
    const created = await tenant.agent.ok("create_research_plan", {
      name: "Long",
      researchQuestion: "q",
      steps: [
        ...Array.from({ length: 52 }, (_, i) => long(i + 1)),
        { stepType: "synthesize", instructions: "Sum up." },
      ],
    });
    const planId = created.planId as string;
    const ids = (created.steps as { stepId: string }[]).map((step) => step.stepId);
    const last = ids[52] as string;
    const unchanged = async () => {
      const status = await tenant.agent.ok("get_plan_history", { planId });
      return status.revisions.length as number;
    };
    const revisions = await unchanged();
    const refusals = [
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "add_steps",
        steps: [long(53)],
        modificationRationale: "One more.",
      }),
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId: last,
        instructions: long(52).instructions,
        modificationRationale: "Longer.",
      }),
      await tenant.agent.fails("fork_plan", {
        planId,
        fromStepId: ids[0],
        stepEdits: [{ stepId: last, instructions: long(52).instructions }],
      }),
    ];
    for (const refused of refusals) expect(refused).toMatch(refusedTotal);
    expect(await unchanged()).toBe(revisions);
    expect(await plans()).toBe(before + 1);
    // What fits is kept: a short step more.
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      steps: [{ stepType: "analyze", instructions: "Check." }],
      modificationRationale: "A check.",
    });

    // A person's modify feedback is kept in the step's instructions: it counts.
    const first = await tenant.agent.ok("get_next_step", { planId });
    const review = await tenant.agent.ok("request_user_review", {
      planId,
      stepId: first.step.stepId,
      summary: "Ok?",
    });
    expect(
      await tenant.agent.fails("submit_user_decision", {
        planId,
        reviewRequestId: review.reviewRequestId,
        decision: "modify",
        feedback: "f".repeat(20_000),
      }),
    ).toMatch(
      /^VALIDATION_ERROR: feedback: the plan's steps would hold [\d,]+ bytes .* a plan; shorten the feedback, or decide without it/,
    );
    expect(await unchanged()).toBe(revisions + 1);
    const decided = await tenant.agent.ok("submit_user_decision", {
      planId,
      reviewRequestId: review.reviewRequestId,
      decision: "modify",
      feedback: "Shorter, please.",
    });
    expect(decided.instructions).toMatch(/Shorter, please\.$/);

    // A plan stored over the limit before it existed moves and drops steps,
    // and adds none.
    await tenant.handle.db.execute(
      sql`update plan_step set instructions = instructions || repeat('x', 100000)
          where id = ${ids[0]}::uuid`,
    );
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "reorder_steps",
      stepIds: [ids[0], last, ...ids.slice(1, 52), ...(await stepIds(planId)).slice(53)],
      modificationRationale: "Sum up early.",
    });
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "remove_step",
      stepId: ids[1],
      modificationRationale: "Shorter.",
    });
    expect(
      await tenant.agent.fails("modify_plan", {
        planId,
        action: "add_steps",
        steps: [{ stepType: "analyze", instructions: "Check again." }],
        modificationRationale: "Another check.",
      }),
    ).toMatch(refusedTotal);
  });

  async function stepIds(planId: string) {
    const status = await tenant.agent.ok("get_plan_status", { planId });
    return (status.steps as { stepId: string }[]).map((step) => step.stepId);
  }
});
