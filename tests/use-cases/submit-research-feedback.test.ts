/**
 * submit_research_feedback records the initial and the closing feedback on a
 * plan; satisfaction is 1 to 5; another tenant cannot give feedback on the
 * plan; a plan takes MAX_PLAN_FEEDBACK, however many arrive at once. In
 * process, on PGlite and on PostgreSQL 15.
 */
import { describe, expect, it } from "vitest";
import { MAX_PLAN_FEEDBACK } from "@/lib/services/research/submit-research-feedback";
import { BACKENDS } from "../support/databases";
import { inProcessAgent, planSteps, tenantContext, useFreshTenant } from "../support/in-process";

describe.each(BACKENDS)("submit_research_feedback on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("records both feedback moments on the plan, refusing a satisfaction out of range", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Judged",
      researchQuestion: "q",
      steps: planSteps("synthesize"),
    });
    const feedback = (feedbackType: string, satisfaction: number) => ({
      planId: plan.planId,
      feedbackType,
      satisfaction,
      summary: `${feedbackType} words`,
      followUpRequested: false,
    });
    expect(await agent.fails("submit_research_feedback", feedback("initial", 6))).toMatch(
      /^VALIDATION_ERROR: satisfaction/,
    );
    const initial = await agent.ok("submit_research_feedback", feedback("initial", 4));
    expect(initial).toMatchObject({ planId: plan.planId, feedbackType: "initial" });
    await agent.ok("submit_research_feedback", feedback("closing", 5));

    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(
      context.feedback.map((entry) => [entry.feedbackType, entry.satisfaction, entry.summary]),
    ).toEqual([
      ["initial", 4, "initial words"],
      ["closing", 5, "closing words"],
    ]);

    const beta = inProcessAgent(await tenantContext(tenant.handle.db, "Beta"));
    expect(await beta.fails("submit_research_feedback", feedback("initial", 3))).toMatch(
      /^NOT_FOUND: /,
    );
  });

  it("takes at most MAX_PLAN_FEEDBACK on a plan, sent all at once, and says so", async () => {
    const { agent } = tenant;
    const plan = await agent.ok("create_research_plan", {
      name: "Judged often",
      researchQuestion: "q",
      steps: planSteps("synthesize"),
    });
    const answers = await Promise.all(
      Array.from({ length: MAX_PLAN_FEEDBACK + 3 }, (_, i) =>
        agent.call("submit_research_feedback", {
          planId: plan.planId,
          feedbackType: i % 2 ? "closing" : "initial",
          satisfaction: 3,
          summary: `Round ${i}.`,
          followUpRequested: false,
        }),
      ),
    );
    expect(answers.filter((answer) => !answer.isError)).toHaveLength(MAX_PLAN_FEEDBACK);
    for (const refused of answers.filter((answer) => answer.isError)) {
      expect(refused.text).toBe(
        `VALIDATION_ERROR: planId: the plan holds ${MAX_PLAN_FEEDBACK} feedback already, the most one plan takes; nothing was stored.`,
      );
    }
    const context = await agent.ok("get_research_context", { planId: plan.planId });
    expect(context.feedback).toHaveLength(MAX_PLAN_FEEDBACK);
  });
});
