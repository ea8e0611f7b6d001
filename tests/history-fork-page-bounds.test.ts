/**
 * The plan page's History and the "Fork from here" form stay within 1 MB
 * however a plan's revisions and steps are written (security review of issue
 * 43, docs/security.md). A revision's diff keeps 40 entries of each kind with
 * 400 characters of each value; a revert's diff of 40 steps back, 40 removed
 * and 40 instructions changed, all in `<`, made the plan page 1.5 MB.
 * The "Fork from here" form stays within 1 MB however a plan's steps are
 * written (security review of issues 43 and 44, docs/security.md). It showed
 * the fork step and the next 19 whole, each step's instructions and a
 * server-run step's arguments indented as JSON: twenty instructions of 20,000
 * `<` (each `&lt;` in the HTML and `\u003c` in React's payload) made a page
 * of several MB, and arguments nested 90 levels deep, within their 64 KB,
 * grew past 1 MB by their indentation alone, and past the 64 KB the form
 * takes back, so the unchanged form could not be sent. Over the production
 * build's web door, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_STEP_IO_BYTES } from "@/lib/services/shared/fields";
import { FORK_FORM_STEPS } from "@/lib/services/views/fork-form";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import { connectAgent, type LoopAgent } from "./support/mcp-client";
import { pageBytes, signInOverHttp, type WebSession } from "./support/web-session";

const MB = 1024 * 1024;

/** An extract_data schema nested `depth` levels, its innermost object as many fields as keep it within `bytes` of JSON. */
function deepSchema(depth: number, bytes: number): Record<string, unknown> {
  const leaves: Record<string, number> = {};
  // Each level's `{"p":…}` and the top's `{"type":"object","properties":…}`.
  let size = depth * '{"p":}'.length + 40;
  for (let i = 0; size < bytes; i++) {
    const key = i.toString(36);
    leaves[key] = 0;
    size += `"${key}":0,`.length;
  }
  let nested: Record<string, unknown> = leaves;
  for (let i = 0; i < depth; i++) nested = { p: nested };
  return { type: "object", properties: nested };
}

/** The text of a page's textareas named `name`, as the browser would send it back. */
function textareas(html: string, name: string): string[] {
  const decoded = (text: string) =>
    text
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&quot;", '"')
      .replaceAll("&#x27;", "'")
      .replaceAll("&amp;", "&");
  return [
    ...html.matchAll(new RegExp(`<textarea[^>]* name="${name}"[^>]*>([^<]*)</textarea>`, "g")),
  ].map((match) => decoded(match[1] ?? "").replace(/^\n/, ""));
}

describe.each(BACKENDS)("history and the fork form at their limits on %s", (backend) => {
  let app: AppServer;
  let agent: LoopAgent;
  let person: WebSession;

  beforeAll(async () => {
    app = await startAppServer(backend);
    agent = await connectAgent(app.mcpUrl, app.tenantA.key);
    person = await signInOverHttp(app.url, app.tenantA.email);
  }, 120_000);
  afterAll(async () => {
    await agent?.close();
    await app?.stop();
  });

  it("shows a revert's diff of the most changes in `<` on the plan page within 1 MB, the rest counted", async () => {
    const long = (end: string) => `${"<".repeat(399)}${end}`;
    const created = await agent.ok("create_research_plan", {
      name: "Long diffs",
      researchQuestion: "How long can a diff be?",
      steps: Array.from({ length: 80 }, () => ({ stepType: "analyze", instructions: long("a") })),
    });
    const { planId } = created;
    const ids: string[] = created.steps.map((s: { stepId: string }) => s.stepId);
    for (const stepId of ids.slice(40)) {
      await agent.ok("modify_plan", {
        planId,
        action: "remove_step",
        stepId,
        modificationRationale: "Fewer.",
      });
    }
    for (const stepId of ids.slice(0, 40)) {
      await agent.ok("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId,
        instructions: long("b"),
        modificationRationale: "Other words.",
      });
    }
    await agent.ok("modify_plan", {
      planId,
      action: "add_steps",
      steps: Array.from({ length: 40 }, () => ({ stepType: "analyze", instructions: long("c") })),
      modificationRationale: "Others.",
    });
    await agent.ok("modify_plan", {
      planId,
      action: "revert_revision",
      revision: 1,
      modificationRationale: "<".repeat(10_000),
    });
    const { html, htmlBytes, payloadBytes } = await pageBytes(person, `/plans/${planId}`);
    expect(htmlBytes).toBeLessThan(MB);
    expect(payloadBytes).toBeLessThan(MB);
    expect(html).toMatch(/and (<!-- -->)?\d+(<!-- -->)? more changes/);
    const history = await agent.ok("get_plan_history", { planId });
    expect(history.revisions[0]).toMatchObject({ cause: "revert_revision" });
    const { diff } = history.revisions[0];
    expect(
      diff.added.length + diff.removed.length + diff.instructions.length + diff.omitted,
    ).toBeGreaterThanOrEqual(120);
  }, 300_000);

  it("shows steps of the longest instructions in `<` within 1 MB, the rest forked as they are", async () => {
    const created = await agent.ok("create_research_plan", {
      name: "Angle brackets",
      researchQuestion: "How long can a form be?",
      steps: Array.from({ length: FORK_FORM_STEPS + 1 }, () => ({
        stepType: "analyze",
        instructions: "<".repeat(20_000),
      })),
    });
    const path = `/plans/${created.planId}/fork?step=${created.steps[0].stepId}`;
    const { html, htmlBytes, payloadBytes } = await pageBytes(person, path);
    expect(htmlBytes).toBeLessThan(MB);
    expect(payloadBytes).toBeLessThan(MB);
    const shown = textareas(html, "instructions");
    expect(shown.length).toBeGreaterThan(0);
    expect(shown[0]).toBe("<".repeat(20_000));
    expect(html).toContain("are forked as they are");
  }, 120_000);

  it("shows deeply nested arguments within 1 MB and takes the unchanged form back", async () => {
    const schema = deepSchema(90, MAX_STEP_IO_BYTES - 2_000);
    const created = await agent.ok("create_research_plan", {
      name: "Deep arguments",
      researchQuestion: "How deep can a form be?",
      steps: [
        {
          stepType: "extract",
          instructions: "Extract the prices.",
          tool: "extract_data",
          arguments: { schema, text: "A heat pump costs 9000 euros." },
        },
        { stepType: "synthesize", instructions: "Write it up." },
      ],
    });
    const fromStepId: string = created.steps[0].stepId;
    const path = `/plans/${created.planId}/fork?step=${fromStepId}`;
    const { html, htmlBytes, payloadBytes } = await pageBytes(person, path);
    expect(htmlBytes).toBeLessThan(MB);
    expect(payloadBytes).toBeLessThan(MB);
    const [args] = textareas(html, "arguments");
    expect(JSON.parse(args ?? "")).toEqual({ schema, text: "A heat pump costs 9000 euros." });
    // The form sent back as shown: the first step's fields (one shown step each).
    const [instructions] = textareas(html, "instructions");
    const forked = await person.action(path, "forkPlanAction", {
      planId: created.planId,
      fromStepId,
      name: "Deep arguments (fork)",
      stepId: fromStepId,
      instructions: instructions ?? "",
      arguments: args ?? "",
    });
    expect(forked.text).not.toMatch(/longer than|not valid JSON|not a JSON object/);
    expect(forked.headers.get("x-action-redirect")).toMatch(/^\/plans\/[0-9a-f-]{36}/);
  }, 120_000);
});
