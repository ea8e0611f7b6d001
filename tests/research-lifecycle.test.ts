/**
 * The six-phase research lifecycle of docs/execution-flow.md, driven over HTTP by a
 * scripted MCP client as an AI platform following the `research` prompt would:
 * interview and routing (recorded by log_skill_execution), the prior-research
 * check (search_sources), plan creation with the session's auto-link, step
 * execution with stored artifacts and a checkpoint, the deliverable, the two
 * feedback moments and the closed tracking record. Then every row and audit
 * event is read back from the database. On PGlite and on PostgreSQL 15.
 */
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  planAuditLog,
  researchArtifacts,
  researchFeedback,
  researchOutputs,
  skillExecutions,
} from "@/lib/db/schema";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { type Agent, connectAgent, report } from "./support/mcp-client";

const SESSION = "claude-session-7f3a";
const USER_MESSAGE =
  "I'm deciding whether to put an air-source heat pump in our 1970s house in Tampere. Is it worth it at minus 20 °C, and what will it cost to run compared with our oil boiler? Give me a proper report.";

const interview = {
  topic: "Air-source heat pumps for an older house in a cold climate",
  researchType: "decision_support",
  scope: "Finland, detached 1970s houses, running and installation costs, 2022-2026",
  depthSignals: ["proper report"],
  decisionContext: "Replace an oil boiler with an air-source heat pump or not",
  knownContext: "The house is a 1970s detached house in Tampere with an oil boiler.",
  outputMediaType: "markdown_report",
  outputFormattingInstructions: "Lead with the recommendation; costs in euros.",
  skipQuestionsReason: "Focused decision with location, house age and criteria given.",
  routingRationale:
    "Options: 2. Dimensions: 3 (efficiency, running cost, installation). Ambiguity: low. Depth signals: ['proper report']. Stakes: a costly, lasting purchase. -> deep.",
  delegatedTo: "deep",
  originalQuery: USER_MESSAGE,
};

describe.each(BACKENDS)("the research lifecycle over MCP on %s", (backend) => {
  let app: AppServer;
  let agent: Agent;

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
  });
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  async function startExecution(extra: Record<string, unknown> = {}, sessionId = SESSION) {
    return agent.ok("log_skill_execution", {
      skillName: "research",
      status: "started",
      sessionId,
      metadata: interview,
      ...extra,
    });
  }

  const ids: {
    executionId?: string;
    planId?: string;
    priorIds?: string[];
    artifactIds?: string[];
    outputId?: string;
    feedbackIds?: string[];
    useExistingId?: string;
    failedId?: string;
  } = {};

  it("runs all six phases, from the research prompt to the closed tracking record", async () => {
    // Earlier research in the library, as a previous session would have stored it.
    const prior = [
      await agent.ok("store_research", {
        artifactType: "source_summary",
        title: "Heat pump performance below minus 15 °C in Nordic field trials",
        content: { scop: 2.4 },
        contentText:
          "Field trials in Finland measured a seasonal coefficient of performance of 2.4 for air-source heat pumps at sustained minus 15 °C.",
        confidence: 0.8,
        sourceUrls: ["https://example.org/nordic-trials"],
      }),
      await agent.ok("store_research", {
        artifactType: "finding",
        title: "Oil boiler running costs in Finland",
        content: { eurosPerYear: 2600 },
        contentText:
          "A detached house burning 2,000 litres of heating oil a year spends about 2,600 euros.",
        confidence: 0.7,
      }),
    ];
    ids.priorIds = prior.map((p) => p.artifactId);

    // Phase 1-2 happen in the platform, guided by the research prompt.
    const prompt = await agent.client.getPrompt({
      name: "research",
      arguments: { request: USER_MESSAGE },
    });
    const text = prompt.messages
      .map((m) => (m.content.type === "text" ? m.content.text : ""))
      .join("");
    expect(text).toContain(USER_MESSAGE);
    for (const tool of [
      "log_skill_execution",
      "search_sources",
      "create_research_plan",
      "get_skill",
    ]) {
      expect(text, tool).toContain(tool);
    }
    // Phase 6's part is fetched when the agent gets there.
    const output = await agent.ok("get_skill", { name: "research-output" });
    for (const tool of ["store_research_output", "submit_research_feedback"]) {
      expect(output.text, tool).toContain(tool);
    }

    // Phase 3a: tracking initialisation.
    const started = await startExecution();
    expect(started).toMatchObject({ status: "started", planId: null });
    const executionId: string = started.executionId;
    ids.executionId = executionId;

    // Phase 3b: the prior-research check finds the earlier artifacts; the user picks "refresh".
    const prior5 = await agent.ok("search_sources", { query: "heat pump cold climate", limit: 5 });
    expect(prior5.results[0]).toMatchObject({
      artifactId: ids.priorIds[0],
      title: "Heat pump performance below minus 15 °C in Nordic field trials",
      researchQuestion: null,
      planId: null,
      stepId: null,
    });
    expect(prior5.results[0].snippet).toContain("**");
    const checked = await agent.ok("log_skill_execution", {
      executionId,
      skillName: "research",
      status: "started",
      metadata: {
        priorResearchCheck: {
          artifactsFound: prior5.results.length,
          artifactIds: prior5.results.map((r: { artifactId: string }) => r.artifactId),
          userDecision: "refresh",
          exchange: "Showed the 2024 field trial; the user wants 2026 prices.",
        },
      },
    });
    expect(checked.status).toBe("started");

    // Phase 4: the plan, linked to the execution through the session id.
    const created = await agent.ok("create_research_plan", {
      name: "[Deep] Heat pump for a 1970s house in Tampere",
      researchQuestion: "Should we replace our oil boiler with an air-source heat pump?",
      steps: [
        { stepType: "search", instructions: "Evidence on heat pumps at minus 20 °C." },
        { stepType: "analyze", instructions: "Compare running costs with the oil boiler." },
        { stepType: "checkpoint", instructions: "Show the comparison to the user." },
        { stepType: "synthesize", instructions: "Recommendation with costs." },
      ],
      branchingConditions: [
        {
          afterStepOrder: 1,
          conditionExpression: "result.sourceCount < 3",
          ifTrueAction: "add_steps",
          actionParams: { focus: "broaden" },
        },
      ],
      planDesignRationale:
        "Decision support, deep: evidence, cost analysis, checkpoint, synthesis.",
      outputFormattingNotes: "Recommendation first.",
      sessionId: SESSION,
    });
    expect(created.linkedExecutionId).toBe(executionId);
    const planId: string = created.planId;
    ids.planId = planId;

    // Phase 5: the execution loop with artifacts stored along the way.
    const artifactIds: string[] = [];
    let checkpointFeedback = "";
    for (;;) {
      const next = await agent.ok("get_next_step", { planId });
      if (next.status === "plan_complete") {
        expect(next).toMatchObject({
          outputMediaType: "markdown_report",
          outputFormattingInstructions: interview.outputFormattingInstructions,
          planFormattingNotes: "Recommendation first.",
        });
        break;
      }
      expect(next.status).toBe("ready");
      const step = next.step;
      if (step.stepOrder > 1) {
        const context = await agent.ok("get_step_context", { planId, stepId: step.stepId });
        expect(context.priorSteps).toHaveLength(step.stepOrder - 1);
        expect(context.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(
          artifactIds,
        );
      }
      if (step.stepType === "checkpoint") {
        const review = await agent.ok("request_user_review", {
          planId,
          stepId: step.stepId,
          summary: "A heat pump saves about 1,400 euros a year at 2026 prices.",
          questions: ["Include a ground-source option?"],
        });
        checkpointFeedback = "No ground source; keep it to air-source.";
        await agent.ok("submit_user_decision", {
          planId,
          reviewRequestId: review.reviewRequestId,
          decision: "approve",
          feedback: checkpointFeedback,
        });
        continue;
      }
      const submitted = await agent.ok("submit_step_result", {
        planId,
        stepId: step.stepId,
        result: { sourceCount: 6, finding: `step ${step.stepOrder}` },
        resultSummary: `Step ${step.stepOrder} done.`,
        confidence: 0.8,
        stepExecutionReport: report,
      });
      expect(submitted.firedConditions).toEqual([]);
      if (step.stepType !== "synthesize") {
        const stored = await agent.ok("store_research", {
          artifactType: step.stepType === "search" ? "source_summary" : "analysis",
          title: `Heat pump running costs in Tampere, step ${step.stepOrder}`,
          content: { step: step.stepOrder },
          contentText: `Running costs of an air-source heat pump in Tampere, from step ${step.stepOrder}.`,
          confidence: 0.8,
          sourceUrls: ["https://example.org/tampere"],
          planId,
          stepId: step.stepId,
        });
        expect(stored).toMatchObject({ planId, stepId: step.stepId });
        artifactIds.push(stored.artifactId);
      }
    }
    ids.artifactIds = artifactIds;

    // The plan's artifacts are found by the library search, with the plan's question.
    const found = await agent.ok("search_sources", { query: "Tampere running costs", planId });
    expect(found.results).toHaveLength(2);
    expect(found.results[0]).toMatchObject({
      planId,
      researchQuestion: "Should we replace our oil boiler with an air-source heat pump?",
    });

    // Phase 6: output delivery, the two feedback moments, tracking completion.
    const outputPrompt = await agent.client.getPrompt({
      name: "research-output",
      arguments: { request: planId },
    });
    expect(JSON.stringify(outputPrompt.messages)).toContain("get_research_context");

    const stored = await agent.ok("store_research_output", {
      planId,
      outputMediaType: "markdown_report",
      content: "# Heat pump: yes\n\nReplace the oil boiler; it saves about 1,400 euros a year.",
      formattingNotes: "Recommendation first, euros.",
    });
    expect(stored).toMatchObject({ planId, executionId });
    ids.outputId = stored.outputId;

    const initial = await agent.ok("submit_research_feedback", {
      planId,
      executionId,
      feedbackType: "initial",
      satisfaction: 4,
      summary: "Useful, clear recommendation.",
      improvementSuggestions: "Add the subsidy rules.",
      followUpRequested: false,
    });
    const closing = await agent.ok("submit_research_feedback", {
      planId,
      feedbackType: "closing",
      satisfaction: 5,
      summary: "The user booked an installer based on the report.",
      followUpRequested: true,
    });
    expect(closing.executionId).toBe(executionId);
    ids.feedbackIds = [initial.feedbackId, closing.feedbackId];

    const done = await agent.ok("log_skill_execution", {
      executionId,
      skillName: "research",
      status: "completed",
      closedReason: "delivered",
      metadata: { stepsCompleted: 4, artifactsStored: 2, checkpointFeedback },
    });
    expect(done).toMatchObject({ executionId, status: "completed", planId });

    const context = await agent.ok("get_research_context", { planId, sessionId: SESSION });
    expect(context.skillExecution).toMatchObject({
      executionId,
      skillName: "research",
      status: "completed",
      sessionId: SESSION,
      closedReason: "delivered",
      metadata: {
        topic: interview.topic,
        delegatedTo: "deep",
        planDesignRationale: expect.stringContaining("Decision support"),
        priorResearchCheck: expect.objectContaining({ userDecision: "refresh" }),
        stepsCompleted: 4,
        checkpointFeedback,
      },
    });
    expect(context.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(artifactIds);
    expect(context.deliverable).toMatchObject({
      outputId: ids.outputId,
      outputMediaType: "markdown_report",
      content: expect.stringContaining("Heat pump: yes"),
    });
    expect(context.feedback.map((f: { feedbackType: string }) => f.feedbackType)).toEqual([
      "initial",
      "closing",
    ]);
    expect(
      await agent.fails("log_skill_execution", {
        executionId,
        skillName: "research",
        status: "executing",
      }),
    ).toMatch(/^INVALID_TRANSITION: This skill execution is already completed/);
  });

  it("closes a started record when the user chooses existing research, with no plan", async () => {
    const started = await startExecution({}, "session-use-existing");
    expect(
      await agent.fails("log_skill_execution", {
        executionId: started.executionId,
        skillName: "research",
        status: "completed",
      }),
    ).toMatch(/^VALIDATION_ERROR: closedReason: required/);
    const closed = await agent.ok("log_skill_execution", {
      executionId: started.executionId,
      skillName: "research",
      status: "completed",
      closedReason: "user chose existing research",
      metadata: { priorResearchCheck: { artifactsFound: 1, userDecision: "use_existing" } },
    });
    expect(closed).toMatchObject({ status: "completed", planId: null });
    ids.useExistingId = started.executionId;
  });

  it("records a failure with its message, and refuses the moves outside the lifecycle", async () => {
    const started = await startExecution({}, "session-failing");
    const executionId = started.executionId;
    expect(
      await agent.fails("log_skill_execution", {
        executionId,
        skillName: "research",
        status: "failed",
      }),
    ).toMatch(/^VALIDATION_ERROR: errorMessage: required/);
    await agent.ok("log_skill_execution", {
      executionId,
      skillName: "research",
      status: "executing",
    });
    expect(
      await agent.fails("log_skill_execution", {
        executionId,
        skillName: "research",
        status: "started",
      }),
    ).toMatch(/^INVALID_TRANSITION: Cannot move a skill execution from executing to started/);
    const failed = await agent.ok("log_skill_execution", {
      executionId,
      skillName: "research",
      status: "failed",
      errorMessage: "No sources on the topic at step 1.",
    });
    expect(failed.status).toBe("failed");
    ids.failedId = executionId;

    // A new record is never created in another status than started.
    expect(
      await agent.fails("log_skill_execution", {
        skillName: "research",
        status: "executing",
        metadata: interview,
      }),
    ).toMatch(/^VALIDATION_ERROR: status: a new tracking record starts as "started"/);
    expect(
      await agent.fails("log_skill_execution", {
        skillName: "research",
        status: "started",
        metadata: { topic: "x" },
      }),
    ).toMatch(
      /^VALIDATION_ERROR: metadata\.researchType, .*metadata\.routingRationale, metadata\.delegatedTo, metadata\.originalQuery, metadata\.clarifyingQuestions or metadata\.skipQuestionsReason: required/,
    );
  });

  it("keeps only the first 5,000 characters of the original query", async () => {
    const long = await startExecution(
      { metadata: { ...interview, originalQuery: "x".repeat(6_000) } },
      "session-long",
    );
    const closed = await agent.ok("log_skill_execution", {
      executionId: long.executionId,
      skillName: "research",
      status: "failed",
      errorMessage: "test",
    });
    expect(closed.status).toBe("failed");
  });

  it("links a record to a plan by hand when the session ids differed", async () => {
    const started = await startExecution({}, "session-manual");
    const created = await agent.ok("create_research_plan", {
      name: "Manual link",
      researchQuestion: "q",
      steps: [{ stepType: "search", instructions: "s" }],
      sessionId: "another-session",
    });
    expect(created.linkedExecutionId).toBeNull();
    const linked = await agent.ok("log_skill_execution", {
      executionId: started.executionId,
      skillName: "research",
      status: "executing",
      planId: created.planId,
    });
    expect(linked).toMatchObject({ status: "executing", planId: created.planId });
    const context = await agent.ok("get_research_context", { planId: created.planId });
    expect(context.skillExecution.executionId).toBe(started.executionId);
  });

  it("keeps tenants apart: Beta can neither see nor touch Alpha's research", async () => {
    const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
    try {
      const { executionId, planId } = ids;
      expect(
        await beta.fails("log_skill_execution", {
          executionId: ids.failedId,
          skillName: "research",
          status: "failed",
          errorMessage: "x",
        }),
      ).toMatch(/^NOT_FOUND: No skill execution/);
      const plan = { planId, outputMediaType: "chat_answer", content: "stolen" };
      expect(await beta.fails("store_research_output", plan)).toMatch(/^NOT_FOUND: No plan/);
      expect(
        await beta.fails("submit_research_feedback", {
          planId,
          feedbackType: "initial",
          satisfaction: 1,
          summary: "x",
          followUpRequested: false,
        }),
      ).toMatch(/^NOT_FOUND: No plan/);
      expect(
        await beta.fails("store_research", {
          artifactType: "finding",
          title: "x",
          content: {},
          contentText: "x",
          confidence: 0.5,
          planId,
        }),
      ).toMatch(/^NOT_FOUND: No plan/);
      expect((await beta.ok("search_sources", { query: "heat pump" })).results).toEqual([]);
      // Alpha's execution stays linked only to Alpha's plan.
      expect(
        await agent.fails("store_research_output", {
          planId: (
            await agent.ok("create_research_plan", {
              name: "Other",
              researchQuestion: "q",
              steps: [{ stepType: "search", instructions: "s" }],
            })
          ).planId,
          executionId,
          outputMediaType: "chat_answer",
          content: "x",
        }),
      ).toMatch(/^VALIDATION_ERROR: executionId: skill execution .* belongs to plan/);
    } finally {
      await beta.close();
    }
  });

  it("pages a plan's artifacts and returns only its newest deliverable, however much it stored", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Many artifacts",
      researchQuestion: "What does a long-running plan hand back on resume?",
      steps: [
        { stepType: "search", instructions: "Collect sources." },
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    const planId = created.planId as string;
    const stored: string[] = [];
    for (let i = 1; i <= 30; i += 1) {
      const artifact = await agent.ok("store_research", {
        artifactType: "source_summary",
        title: `Source ${i}`,
        content: { index: i },
        contentText: `Source number ${i}. ${"Details. ".repeat(40)}`,
        confidence: 0.5,
        sourceUrls: [],
        planId,
      });
      stored.push(artifact.artifactId);
    }
    // Two earlier deliverables of almost the allowed size, then the one that counts.
    for (const marker of ["FIRST-DRAFT", "SECOND-DRAFT"]) {
      await agent.ok("store_research_output", {
        planId,
        outputMediaType: "markdown",
        content: `${marker} ${"x".repeat(400_000)}`,
      });
    }
    const latest = await agent.ok("store_research_output", {
      planId,
      outputMediaType: "markdown",
      content: "# Final\n\nThe short, final report.",
    });

    // The first page, as an agent that does not know about paging gets it.
    const first = await agent.ok("get_research_context", { planId, sessionId: SESSION });
    expect(first.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(
      stored.slice(0, 25),
    );
    expect(first.artifacts[0]).toMatchObject({ title: "Source 1", content: { index: 1 } });
    expect(first.artifactsTotal).toBe(30);
    expect(first.artifactsNextCursor).toEqual(expect.any(String));
    expect(first.deliverable).toMatchObject({
      outputId: latest.outputId,
      content: "# Final\n\nThe short, final report.",
    });
    expect(JSON.stringify(first)).not.toContain("DRAFT");

    // The rest, by following artifactsNextCursor.
    const rest = await agent.ok("get_research_context", {
      planId,
      artifactsCursor: first.artifactsNextCursor ?? undefined,
    });
    expect(rest.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(
      stored.slice(25),
    );
    expect(rest.artifactsNextCursor).toBeNull();
    const small = await agent.ok("get_research_context", { planId, artifactsLimit: 10 });
    expect(small.artifacts).toHaveLength(10);
    expect(small.artifactsNextCursor).toEqual(expect.any(String));
    expect(await agent.fails("get_research_context", { planId, artifactsLimit: 101 })).toMatch(
      /^VALIDATION_ERROR: artifactsLimit/,
    );

    // get_step_context pages the same list the same way, so it reads on from that cursor.
    const step = await agent.ok("get_next_step", { planId });
    const stepContext = await agent.ok("get_step_context", {
      planId,
      stepId: step.step.stepId,
      artifactsCursor: small.artifactsNextCursor ?? undefined,
      artifactsLimit: 20,
    });
    expect(stepContext.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(
      stored.slice(10),
    );
    expect(stepContext).toMatchObject({ artifactsTotal: 30, artifactsNextCursor: null });

    // The plan resource is the first page, with the count.
    const resource = await agent.client.readResource({ uri: `cairn://plans/${planId}` });
    const text = (resource.contents[0] as { text: string }).text;
    const read = JSON.parse(text);
    expect(read.artifacts).toHaveLength(25);
    expect(read).toMatchObject({ artifactsTotal: 30, artifactsNextCursor: expect.any(String) });
    expect(text).not.toContain("DRAFT");
  });

  it("wrote every row and audit event of the lifecycle", async () => {
    await app.stopServer();
    const db = await app.openDatabase();
    try {
      const { executionId, planId } = ids;
      if (!executionId || !planId) throw new Error("the lifecycle test did not run");
      const [execution] = await db.db
        .select()
        .from(skillExecutions)
        .where(eq(skillExecutions.id, executionId));
      expect(execution).toMatchObject({
        tenantId: app.tenantA.tenantId,
        planId,
        skillName: "research",
        status: "completed",
        sessionId: SESSION,
        closedReason: "delivered",
        errorMessage: null,
      });
      expect(execution?.completedAt).toBeInstanceOf(Date);
      expect(execution?.metadata).toMatchObject({
        ...interview,
        priorResearchCheck: { userDecision: "refresh", artifactsFound: 2 },
        stepsCompleted: 4,
        artifactsStored: 2,
      });

      const artifacts = await db.db
        .select()
        .from(researchArtifacts)
        .where(eq(researchArtifacts.planId, planId))
        .orderBy(asc(researchArtifacts.createdAt));
      expect(artifacts.map((a) => a.id)).toEqual(ids.artifactIds);
      expect(artifacts.every((a) => a.tenantId === app.tenantA.tenantId && a.stepId)).toBe(true);
      expect(artifacts[0]?.sourceUrls).toEqual(["https://example.org/tampere"]);

      const outputs = await db.db
        .select()
        .from(researchOutputs)
        .where(eq(researchOutputs.planId, planId));
      expect(outputs).toEqual([
        expect.objectContaining({
          id: ids.outputId,
          executionId,
          outputMediaType: "markdown_report",
          formattingNotes: "Recommendation first, euros.",
        }),
      ]);

      const feedback = await db.db
        .select()
        .from(researchFeedback)
        .where(eq(researchFeedback.planId, planId))
        .orderBy(asc(researchFeedback.createdAt));
      expect(
        feedback.map((f) => [f.id, f.feedbackType, f.satisfaction, f.followUpRequested]),
      ).toEqual([
        [ids.feedbackIds?.[0], "initial", 4, false],
        [ids.feedbackIds?.[1], "closing", 5, true],
      ]);
      expect(feedback.every((f) => f.executionId === executionId)).toBe(true);

      const trail = await db.db
        .select()
        .from(planAuditLog)
        .where(eq(planAuditLog.tenantId, app.tenantA.tenantId))
        .orderBy(asc(planAuditLog.createdAt));
      const ofExecution = (id: string | undefined) =>
        trail
          .filter((r) => (r.payload as { executionId?: string }).executionId === id)
          .map((r) => [r.eventType, r.planId, (r.payload as { status: string }).status]);
      expect(ofExecution(executionId)).toEqual([
        ["skill_started", null, "started"],
        ["skill_completed", planId, "completed"],
      ]);
      expect(ofExecution(ids.useExistingId)).toEqual([
        ["skill_started", null, "started"],
        ["skill_completed", null, "completed"],
      ]);
      expect(ofExecution(ids.failedId)).toEqual([
        ["skill_started", null, "started"],
        ["skill_completed", null, "failed"],
      ]);
      const failedRow = trail.find(
        (r) =>
          r.eventType === "skill_completed" &&
          (r.payload as { executionId?: string }).executionId === ids.failedId,
      );
      expect(failedRow?.payload).toMatchObject({
        errorMessage: "No sources on the topic at step 1.",
      });

      const ofPlan = trail
        .filter((r) => r.planId === planId)
        .map((r) => [r.eventType, (r.payload as { action?: string }).action ?? null]);
      expect(ofPlan).toEqual([
        ["plan_modified", "created"],
        ["step_started", null],
        ["step_completed", null],
        // The first artifact's source URL, new to the plan (docs/evidence.md); the
        // second artifact's is the same page, so it records nothing.
        ["evidence_recorded", null],
        ["step_started", null],
        ["step_completed", null],
        ["step_started", null],
        ["user_reviewed", "review_requested"],
        ["user_reviewed", "decision"],
        ["step_started", null],
        ["step_completed", null],
        // The deliverable, with its content's digest (docs/reviews.md, the checkpoint rule).
        ["output_stored", null],
        ["skill_completed", null],
        ["session_resumed", null],
      ]);
      for (const row of trail) {
        expect(row).toMatchObject({ actorType: "api_key", actorId: app.tenantA.apiKeyId });
      }

      const [long] = await db.db
        .select({ metadata: skillExecutions.metadata })
        .from(skillExecutions)
        .where(eq(skillExecutions.sessionId, "session-long"));
      expect(
        (long?.metadata as { originalQuery?: string } | undefined)?.originalQuery,
      ).toHaveLength(5_000);
    } finally {
      await db.close();
    }
  });
});
