/**
 * A plan's history and forks over /api/mcp (docs/history-and-forks.md), as
 * an agent meets them, in both protocol eras and on both databases. The rules
 * themselves are tested in process (tests/use-cases/plan-history.test.ts,
 * tests/use-cases/fork-plan.test.ts). Together the tests walk issue 43's
 * acceptance: three changes read back as revisions, a revert to revision 1,
 * a fork from step 2 with its edit, and a people_only fork that asks a
 * person again for a checkpoint whose content changed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { CLIENT_REVISIONS, connectAgentOn, type LoopAgent, report } from "./support/mcp-client";
import { signInOverHttp, type WebSession } from "./support/web-session";

const steps = [
  { stepType: "search", instructions: "Find heat pump studies." },
  { stepType: "analyze", instructions: "Compare by efficiency." },
  { stepType: "synthesize", instructions: "Write it up." },
];

describe.each(BACKENDS)("history and forks over /api/mcp on %s", (backend) => {
  let app: AppServer;
  let admin: WebSession;
  beforeAll(async () => {
    app = await startAppServer(backend);
    admin = await signInOverHttp(app.url, app.tenantA.email);
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
  });

  describe.each(CLIENT_REVISIONS)("a %s client", (revision) => {
    let agent: LoopAgent;
    beforeAll(async () => {
      agent = await connectAgentOn(revision, app.mcpUrl, app.tenantA.key);
    });
    afterAll(async () => {
      await agent?.close();
    });

    it("reads a plan changed three times as its revisions with diffs, newest first", async () => {
      const created = await agent.ok("create_research_plan", {
        name: "Heat pumps",
        researchQuestion: "Are heat pumps worth it?",
        steps,
      });
      const { planId } = created;
      const analyze = created.steps[1].stepId;
      for (const instructions of ["Compare by cost.", "Compare by cost and noise."]) {
        await agent.ok("modify_plan", {
          planId,
          action: "update_step_instructions",
          stepId: analyze,
          instructions,
          modificationRationale: `Now: ${instructions}`,
        });
      }
      await agent.ok("modify_plan", {
        planId,
        action: "add_steps",
        steps: [{ stepType: "critique", instructions: "Check the sources." }],
        modificationRationale: "A critique at the end.",
      });
      const history = await agent.ok("get_plan_history", { planId });
      expect(history.revisions.map((r: { revision: number }) => r.revision)).toEqual([4, 3, 2, 1]);
      expect(history.revisions[1].diff.instructions).toEqual([
        {
          stepId: analyze,
          stepOrder: 2,
          from: { text: "Compare by cost.", cut: false },
          to: { text: "Compare by cost and noise.", cut: false },
        },
      ]);
      expect(history.revisions[0].diff.added).toEqual([
        expect.objectContaining({ stepOrder: 4, stepType: "critique" }),
      ]);
      expect(await agent.fails("get_plan_history", { planId: crypto.randomUUID() })).toMatch(
        /^NOT_FOUND: /,
      );

      // Back to revision 1: the original instructions, as a new revision.
      await agent.ok("modify_plan", {
        planId,
        action: "revert_revision",
        revision: 1,
        modificationRationale: "Back to the start.",
      });
      const reverted = await agent.ok("get_plan_history", { planId });
      expect(reverted.revisions[0]).toMatchObject({
        revision: 5,
        cause: "revert_revision",
        rationale: "Back to the start.",
      });
      const context = await agent.ok("get_research_context", { planId });
      expect(context.steps.map((s: { instructions: string }) => s.instructions)).toEqual(
        steps.map((s) => s.instructions),
      );
    });

    it("forks from step 2 with an edited step 2: step 1 carried, the edit handed out, both plans linked", async () => {
      const created = await agent.ok("create_research_plan", {
        name: "Heat pumps by cost",
        researchQuestion: "Are heat pumps worth it?",
        steps,
      });
      const { planId } = created;
      const first = await agent.ok("get_next_step", { planId });
      await agent.ok("submit_step_result", {
        planId,
        stepId: first.step.stepId,
        result: { studies: 4 },
        stepExecutionReport: report,
      });
      const fork = await agent.ok("fork_plan", {
        planId,
        fromStepId: created.steps[1].stepId,
        stepEdits: [{ stepId: created.steps[1].stepId, instructions: "Compare by cost." }],
        name: "By cost",
      });
      expect(fork.steps.map((s: { status: string }) => s.status)).toEqual([
        "completed",
        "pending",
        "pending",
      ]);
      const next = await agent.ok("get_next_step", { planId: fork.planId });
      expect(next.step).toMatchObject({ stepOrder: 2, instructions: "Compare by cost." });
      const context = await agent.ok("get_research_context", { planId: fork.planId });
      expect(context.steps[0].result).toEqual({ studies: 4 });
      expect(context.plan.forkedFrom.planId).toBe(planId);
      const source = await agent.ok("get_plan_status", { planId });
      expect(source.forks).toEqual([{ planId: fork.planId, name: "By cost", status: "executing" }]);
      expect(source.steps.map((s: { status: string }) => s.status)).toEqual([
        "completed",
        "pending",
        "pending",
      ]);
      const sourceContext = await agent.ok("get_research_context", { planId });
      expect(sourceContext.steps[0].result).toEqual({ studies: 4 });
      expect(sourceContext.steps[1].instructions).toBe("Compare by efficiency.");
      expect(sourceContext.plan.forks.map((f: { planId: string }) => f.planId)).toEqual([
        fork.planId,
      ]);
      const forkStatus = await agent.ok("get_plan_status", { planId: fork.planId });
      expect(forkStatus.forkedFrom).toMatchObject({ planId, stepId: created.steps[1].stepId });
      const reverted = await agent.ok("modify_plan", {
        planId: fork.planId,
        action: "revert_revision",
        revision: 1,
        modificationRationale: "As forked.",
      });
      expect(reverted.action).toBe("revert_revision");
    });

    it("under people_only, forks to ask a person again for a checkpoint whose content changed", async () => {
      const setPolicy = async (decisionPolicy: string) => {
        const saved = await admin.action("/admin", "setDecisionPolicyAction", { decisionPolicy });
        expect(saved.status).toBe(200);
      };
      await setPolicy("people_only");
      try {
        const created = await agent.ok("create_research_plan", {
          name: "Scope first",
          researchQuestion: "Are heat pumps worth it?",
          steps: [{ stepType: "checkpoint", instructions: "Confirm the scope: Europe." }, ...steps],
        });
        const { planId } = created;
        const checkpoint = await agent.ok("get_next_step", { planId });
        const review = await agent.ok("request_user_review", {
          planId,
          stepId: checkpoint.step.stepId,
          summary: "Europe only?",
          proposedResult: { scope: "Europe" },
        });
        // The person approves in Cairn's web UI.
        const decided = await admin.action(`/plans/${planId}`, "decideReviewAction", {
          planId,
          reviewRequestId: review.reviewRequestId,
          decision: "approve",
          contentDigest: review.contentDigest,
        });
        expect(decided.status).toBe(200);
        const search = await agent.ok("get_next_step", { planId });
        expect(search.step.stepOrder).toBe(2);
        await agent.ok("submit_step_result", {
          planId,
          stepId: search.step.stepId,
          result: { studies: 2 },
          stepExecutionReport: report,
        });
        await agent.ok("modify_plan", {
          planId,
          action: "update_step_instructions",
          stepId: checkpoint.step.stepId,
          instructions: "Confirm the scope: Asia.",
          modificationRationale: "The scope changed.",
        });
        const fork = await agent.ok("fork_plan", { planId, fromStepId: created.steps[2].stepId });
        expect(fork.reopened).toMatch(
          /^The fork starts at step 1, not 3: what checkpoint step 1 showed changed/,
        );
        expect(fork.steps.map((s: { status: string }) => s.status)).toEqual([
          "pending",
          "pending",
          "pending",
          "pending",
        ]);
        const again = await agent.ok("get_next_step", { planId: fork.planId });
        expect(again.step).toMatchObject({ stepOrder: 1, stepType: "checkpoint" });
        expect(
          await agent.fails("submit_step_result", {
            planId: fork.planId,
            stepId: again.step.stepId,
            result: { scope: "Asia" },
            stepExecutionReport: report,
          }),
        ).toMatch(/^FORBIDDEN: /);
      } finally {
        await setPolicy("people_and_agents");
      }
    });
  });

  // The other team, where only people decide: a revert removes the steps
  // added since its revision, and a checkpoint among them only as
  // remove_step would (security review, docs/security.md).
  describe.each(CLIENT_REVISIONS)("a %s client where only people decide", (revision) => {
    let agent: LoopAgent;
    beforeAll(async () => {
      const admin = await signInOverHttp(app.url, app.tenantB.email);
      const saved = await admin.action("/admin", "setDecisionPolicyAction", {
        decisionPolicy: "people_only",
      });
      expect(saved.status).toBe(200);
      agent = await connectAgentOn(revision, app.mcpUrl, app.tenantB.key);
    });
    afterAll(async () => {
      await agent?.close();
    });

    it("cannot revert to before a checkpoint was added: the checkpoint stays for a person", async () => {
      const created = await agent.ok("create_research_plan", {
        name: "Heat pumps, checked",
        researchQuestion: "Are heat pumps worth it?",
        steps,
      });
      const { planId } = created;
      await agent.ok("modify_plan", {
        planId,
        action: "add_steps",
        steps: [{ stepType: "checkpoint", instructions: "Confirm the studies with the person." }],
        insertAfterOrder: 1,
        modificationRationale: "A person confirms the studies.",
      });
      expect(
        await agent.fails("modify_plan", {
          planId,
          action: "revert_revision",
          revision: 1,
          modificationRationale: "Without the checkpoint.",
        }),
      ).toMatch(/^FORBIDDEN: Step 2 is a checkpoint and this team lets only people decide/);
      const status = await agent.ok("get_plan_status", { planId });
      expect(status.steps.map((s: { stepType: string }) => s.stepType)).toEqual([
        "search",
        "checkpoint",
        "analyze",
        "synthesize",
      ]);
    });
  });
});
