/**
 * Cairn's MCP App cards in a real browser, in a test host built on the MCP
 * Apps SDK's AppBridge (e2e/app-host/host.ts), as a chat client shows them: the
 * host's MCP client (the SDK v2 client pinned to 2026-07-28, or the 1.x
 * client of 2025-11-25) calls a tool as the model would, reads the card its
 * `_meta.ui.resourceUri` names, and renders it in a sandboxed iframe whose
 * tool calls it relays. On a connection a person authorized in Cairn's
 * browser flow, of an app the team names among its trusted apps, the card's
 * decisions are that person's, made in their client;
 * on an API key where only people decide, the card decides nothing and links
 * the review page; a card gone stale says so. The plan card follows a plan to
 * completion. On both databases; axe-core checks both cards in both themes.
 */
import { AxeBuilder } from "@axe-core/playwright";
import { expect, type FrameLocator, type Page, test } from "@playwright/test";
import { build } from "esbuild";
import { type AppServer, startAppServer } from "../tests/support/app-server";
import { BACKENDS } from "../tests/support/databases";
import {
  type Agent,
  connectAgent,
  connectModernAgent,
  plainResult,
} from "../tests/support/mcp-client";
import { connectAppOverHttp } from "../tests/support/oauth-over-http";
import { signInOverHttp, type WebSession } from "../tests/support/web-session";
import { keepScreenshot } from "./fixtures";

const ERAS = ["2026-07-28", "2025-11-25"] as const;
type Era = (typeof ERAS)[number];
type HostClient = Pick<Agent, "ok" | "close"> & {
  client: {
    callTool: Agent["client"]["callTool"];
    listTools: Agent["client"]["listTools"];
    readResource: Agent["client"]["readResource"];
  };
};

let hostScript: Promise<string> | undefined;
/** The host's code, bundled once for the browser. */
function host(): Promise<string> {
  hostScript ??= build({
    entryPoints: ["e2e/app-host/host.ts"],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    logLevel: "warning",
  }).then((bundle) => bundle.outputFiles[0]?.text ?? "");
  return hostScript;
}

/** A host declares the MCP Apps extension (a 2026-07-28 request carries it on every call). */
const RENDERS_APPS = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
};

function connect(era: Era, mcpUrl: string, credential: string): Promise<HostClient> {
  return era === "2026-07-28"
    ? (connectModernAgent(mcpUrl, credential, {
        capabilities: RENDERS_APPS,
      }) as Promise<HostClient>)
    : connectAgent(mcpUrl, credential);
}

/** The host page, its tool calls relayed to `client`. */
async function openHost(page: Page, client: HostClient) {
  await page.exposeFunction("callCairnTool", (name: string, args: Record<string, unknown>) =>
    client.client.callTool({ name, arguments: args }),
  );
  await page.setContent(
    `<!doctype html><html lang="en"><head><title>Chat</title></head><body><main aria-label="Chat"><h1>Chat</h1></main><script>${await host()}</script></body></html>`,
  );
}

/**
 * What a host does after the model's tool call: reads the card the tool names
 * and renders it with the call's arguments and result. Returns the card's frame.
 */
/** What the host sends beyond its theme: its style variables and the room it gives the card. */
type HostLook = Pick<Parameters<Window["showCard"]>[0], "styles" | "containerDimensions">;
type HostVariables = NonNullable<NonNullable<HostLook["styles"]>["variables"]>;

async function showCard(
  page: Page,
  client: HostClient,
  call: { tool: string; args: Record<string, unknown>; result: unknown },
  theme: "light" | "dark" = "light",
  look: HostLook = {},
): Promise<FrameLocator> {
  const { tools } = await client.client.listTools();
  const tool = tools.find((t) => t.name === call.tool);
  const uri = (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
  expect(uri, `${call.tool} names a card`).toMatch(/^ui:\/\/cairn\//);
  const { contents } = await client.client.readResource({ uri: uri as string });
  const card = contents[0] as {
    mimeType?: string;
    text?: string;
    _meta?: { ui?: { csp?: unknown } };
  };
  expect(card.mimeType).toBe("text/html;profile=mcp-app");
  const toolResult = {
    content: [{ type: "text", text: JSON.stringify(call.result) }],
    structuredContent: call.result,
  };
  await page.evaluate((request) => window.showCard(request as never), {
    html: card.text,
    csp: card._meta?.ui?.csp,
    theme,
    ...look,
    toolInput: call.args,
    toolResult,
  });
  return page.frameLocator('iframe[title="Cairn card"]');
}

async function expectAccessible(page: Page) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  expect(violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target).join(", ")}`)).toEqual([]);
}

for (const backend of BACKENDS) {
  test.describe(`MCP App cards (${backend})`, () => {
    let app: AppServer;
    let admin: WebSession;
    let personToken: string;

    test.beforeAll(async () => {
      test.setTimeout(120_000);
      app = await startAppServer(backend);
      admin = await signInOverHttp(app.url, app.tenantA.email);
      const host = await connectAppOverHttp(app, admin, "Chat host");
      personToken = host.accessToken;
      // Where only people decide, a card decides as the person only in an app the team names.
      const trusted = await admin.action("/admin", "setTrustedClientsAction", {
        trust: "only",
        clientIds: host.clientId,
      });
      expect(trusted.text).toContain("count only from this app");
    });
    test.afterAll(async () => {
      await app?.stop();
    });

    async function setPolicy(decisionPolicy: "people_only" | "people_and_agents") {
      const saved = await admin.action("/admin", "setDecisionPolicyAction", { decisionPolicy });
      expect(saved.status).toBe(200);
    }

    /** The person's 2026-07-28 host on the page and an agent on the team's API key, closed after `run`. */
    async function withHostAndAgent(
      page: Page,
      run: (client: HostClient, agent: Agent) => Promise<void>,
    ) {
      await setPolicy("people_only");
      const client = await connect("2026-07-28", app.mcpUrl, personToken);
      const agent = await connectAgent(app.mcpUrl, app.tenantA.key);
      try {
        await openHost(page, client);
        await run(client, agent);
      } finally {
        await agent.close();
        await client.close();
      }
    }

    /** The model's calls up to a checkpoint's review, through the host's client. */
    async function requestReview(
      client: HostClient,
      planId: string,
      stepId: string,
      summary: string,
    ) {
      const args = {
        planId,
        stepId,
        summary,
        questions: ["Is 9,000 euros the ceiling?"],
        proposedResult: { shortlist: ["A", "B", "C"] },
        proposedConfidence: 0.8,
      };
      return {
        tool: "request_user_review",
        args,
        result: await client.ok("request_user_review", args),
      };
    }

    async function checkpointPlan(client: HostClient, checkpoints: number) {
      const { planId } = await client.ok("create_research_plan", {
        name: "Heat pumps",
        researchQuestion: "Which heat pump fits the budget?",
        steps: [
          ...Array.from({ length: checkpoints }, (_, i) => ({
            stepType: "checkpoint",
            instructions: `Checkpoint ${i + 1}: confirm the shortlist with the person.`,
          })),
          { stepType: "synthesize", instructions: "Write the answer." },
        ],
      });
      return planId as string;
    }

    for (const era of ERAS) {
      test(`a person decides in the card: approve, modify with feedback, reject (${era})`, async ({
        page,
      }) => {
        await setPolicy("people_only");
        const client = await connect(era, app.mcpUrl, personToken);
        try {
          await openHost(page, client);
          const planId = await checkpointPlan(client, 2);

          let next = await client.ok("get_next_step", { planId });
          const asked = await requestReview(client, planId, next.step.stepId, "Three pumps fit.");
          if (era === "2026-07-28") {
            // The same person's connection in a client that does not render MCP Apps:
            // its model would see the card's tools, so they answer it nothing.
            const plain = await connectModernAgent(app.mcpUrl, personToken);
            try {
              const refused = await plain.fails("decide_in_review_card", {
                planId,
                reviewRequestId: asked.result.reviewRequestId,
                contentDigest: asked.result.contentDigest,
                decision: "approve",
              });
              expect(refused).toMatch(
                /^FORBIDDEN: decide_in_review_card is for Cairn's MCP App cards/,
              );
              const listed = (await plain.client.listTools()).tools.map((tool) => tool.name);
              expect(listed).not.toContain("decide_in_review_card");
            } finally {
              await plain.close();
            }
          }
          let card = await showCard(page, client, asked);
          await expect(
            card.getByRole("heading", { name: "Your review is needed on step 1" }),
          ).toBeVisible();
          await expect(card.getByTestId("review-summary")).toHaveText("Three pumps fit.");
          await expect(card.getByTestId("review-proposal-field").locator("dt")).toHaveText([
            "shortlist",
          ]);
          await expect(card.getByText("Is 9,000 euros the ceiling?")).toBeVisible();
          await expect(card.getByTestId("who-decides")).toContainText("recorded as yours");
          if (era === "2026-07-28") await keepScreenshot(page, "mcp-app-review-card");
          await card.getByRole("button", { name: "Approve" }).click();
          await expect(card.getByTestId("action-message")).toHaveText(
            "Approved: the step is complete. The plan continues.",
          );
          await expect(card.getByTestId("current-state")).toContainText("executing");
          await expect
            .poll(() => page.evaluate(() => window.modelContext.join("\n")))
            .toContain("Approved: the step is complete");

          next = await client.ok("get_next_step", { planId });
          card = await showCard(
            page,
            client,
            await requestReview(client, planId, next.step.stepId, "Two pumps left."),
          );
          // Modify needs feedback: the card says so and sends nothing.
          await card.getByRole("button", { name: "Modify with feedback" }).click();
          await expect(card.getByRole("alert")).toContainText("Write the feedback");
          await card.getByLabel(/Feedback/).fill("Add the 2024 prices.");
          await card.getByRole("button", { name: "Modify with feedback" }).click();
          await expect(card.getByTestId("action-message")).toContainText(
            "Sent back with your feedback",
          );

          next = await client.ok("get_next_step", { planId });
          expect(next.step.instructions).toContain("Add the 2024 prices.");
          card = await showCard(
            page,
            client,
            await requestReview(client, planId, next.step.stepId, "Prices added."),
          );
          await card.getByRole("button", { name: "Reject…" }).click();
          await card.getByRole("button", { name: "Confirm reject: fail the plan" }).click();
          await expect(card.getByTestId("action-message")).toHaveText(
            "Rejected: the step failed, and so has the plan.",
          );

          const context = await client.ok("get_research_context", { planId });
          expect(context.plan.status).toBe("failed");
          const decisions = context.reviews.map((review) => review.decision);
          expect(decisions.map((d) => d?.decision).sort()).toEqual(["approve", "modify", "reject"]);
          for (const decision of decisions) {
            expect(decision).toMatchObject({
              channel: "client",
              decidedBy: expect.stringContaining(
                `answering in the MCP client "Cairn's review card"`,
              ),
            });
          }
        } finally {
          await client.close();
        }
      });
    }

    test("on an API key where only people decide, the card decides nothing and links the review page", async ({
      page,
    }) => {
      await setPolicy("people_only");
      const client = await connect("2025-11-25", app.mcpUrl, app.tenantA.key);
      try {
        await openHost(page, client);
        const planId = await checkpointPlan(client, 1);
        const next = await client.ok("get_next_step", { planId });
        const card = await showCard(
          page,
          client,
          await requestReview(client, planId, next.step.stepId, "Three pumps fit."),
          "dark",
        );
        await expect(card.getByTestId("decide-elsewhere")).toContainText(
          "Decide on the review page",
        );
        await expect(card.getByRole("button", { name: "Approve" })).toHaveCount(0);
        await expectAccessible(page);
        await keepScreenshot(page, "mcp-app-review-card-api-key-dark");
        await card.getByRole("link", { name: "Open the review page" }).click();
        await expect
          .poll(() => page.evaluate(() => window.openedLinks))
          .toEqual([`${app.url}/plans/${planId}#review`]);
        expect((await client.ok("get_plan_status", { planId })).status).toBe("awaiting_review");
      } finally {
        await client.close();
      }
    });

    test("a stale card (decided on the web meanwhile) says so and changes nothing", async ({
      page,
    }) => {
      await setPolicy("people_only");
      const client = await connect("2026-07-28", app.mcpUrl, personToken);
      try {
        await openHost(page, client);
        const planId = await checkpointPlan(client, 1);
        const next = await client.ok("get_next_step", { planId });
        const asked = await requestReview(client, planId, next.step.stepId, "Three pumps fit.");
        const card = await showCard(page, client, asked);
        await expectAccessible(page);
        await expect(card.getByRole("button", { name: "Approve" })).toBeVisible();
        const onTheWeb = await admin.action(`/plans/${planId}`, "decideReviewAction", {
          planId,
          reviewRequestId: asked.result.reviewRequestId,
          contentDigest: asked.result.contentDigest,
          decision: "skip",
        });
        expect(onTheWeb.status).toBe(200);
        await card.getByRole("button", { name: "Approve" }).click();
        await expect(card.getByTestId("action-message")).toContainText(
          "no longer waiting for a decision: it is executing. Someone else",
        );
        await expect(card.getByTestId("current-state")).toContainText("executing");
        const context = await client.ok("get_research_context", { planId });
        expect(context.steps[0].status).toBe("skipped");
        expect(context.reviews[0].decision).toMatchObject({ decision: "skip", channel: "web" });
      } finally {
        await client.close();
      }
    });

    test("in a host whose danger colour is too faint and whose room is short, the card stays readable, shows every field, scrolls within the room, and says what is true as the plan ends", async ({
      page,
    }) => {
      await withHostAndAgent(page, async (client, agent) => {
        const planId = await checkpointPlan(client, 1);
        const next = await client.ok("get_next_step", { planId });
        const args = {
          planId,
          stepId: next.step.stepId,
          summary: "Three pumps fit.",
          // A long field first: the fields after it stay in view.
          proposedResult: { notes: "n".repeat(3_000), verdict: "holds", sources: 4 },
        };
        const card = await showCard(
          page,
          client,
          {
            tool: "request_user_review",
            args,
            result: await client.ok("request_user_review", args),
          },
          "light",
          {
            // A host's light theme whose danger text is 4.48:1 on its white background.
            // The SDK's type lists every variable; a host sends the ones it has.
            styles: {
              variables: {
                "--color-background-primary": "#ffffff",
                "--color-text-primary": "#0b0b0b",
                "--color-text-danger": "#e13131",
              } as HostVariables,
            },
            containerDimensions: { maxHeight: 400 },
          },
        );
        const fields = card.getByTestId("review-proposal-field");
        await expect(fields.locator("dt")).toHaveText(["notes", "verdict", "sources"]);
        await expect(fields.first().getByTestId("review-proposal-json-all")).toHaveText(
          "Show all (3 KB)",
        );
        await expect(fields.nth(1).getByTestId("review-proposal-json")).toHaveText('"holds"');
        await expect(fields.nth(2).getByTestId("review-proposal-json")).toHaveText("4");
        // The card keeps to the host's maximum height and scrolls inside it.
        const frame = page.locator('iframe[title="Cairn card"]');
        await expect
          .poll(() => frame.evaluate((element) => element.clientHeight))
          .toBeLessThanOrEqual(400);
        expect(
          await card
            .locator("body")
            .evaluate(
              () =>
                (document.scrollingElement?.scrollHeight ?? 0) >
                (document.scrollingElement?.clientHeight ?? 0),
            ),
        ).toBe(true);
        // Reject's colours: the host's faint danger colour is not used for text.
        await card.getByRole("button", { name: "Reject…" }).click();
        await expect(
          card.getByRole("button", { name: "Confirm reject: fail the plan" }),
        ).toBeVisible();
        await expectAccessible(page);
        await card.getByRole("button", { name: "Cancel" }).click();

        await card.getByRole("button", { name: "Approve" }).click();
        await expect(card.getByTestId("action-message")).toHaveText(
          "Approved: the step is complete. The plan continues.",
        );
        const last = await agent.ok("get_next_step", { planId });
        await agent.ok("submit_step_result", plainResult(planId, last.step.stepId));
        await expect(card.getByTestId("action-message")).toHaveText(
          "Approved: the step is complete. The plan has completed since.",
        );
        await expect(card.getByTestId("current-state")).toContainText("completed");
      });
    });

    test("the plan card follows a plan to completion, deciding its review on the way", async ({
      page,
    }) => {
      await withHostAndAgent(page, async (client, agent) => {
        const args = {
          name: "Heat pumps",
          researchQuestion: "Which heat pump fits the budget?",
          steps: [
            { stepType: "search", instructions: "Find the pumps." },
            { stepType: "checkpoint", instructions: "Confirm the shortlist." },
            { stepType: "synthesize", instructions: "Write the answer." },
          ],
        };
        const created = await client.ok("create_research_plan", args);
        const planId = created.planId as string;
        const card = await showCard(page, client, {
          tool: "create_research_plan",
          args,
          result: created,
        });
        await expect(card.getByTestId("plan-card")).toBeVisible();
        await expect(card.getByTestId("plan-steps").getByRole("listitem")).toHaveCount(3);
        await expect(card.getByText("0 of 3 steps done")).toBeVisible();

        const search = await agent.ok("get_next_step", { planId });
        await agent.ok(
          "submit_step_result",
          plainResult(planId, search.step.stepId, {
            evidence: {
              sources: [{ url: "https://example.org/pumps", title: "Pump test" }],
              claims: [{ text: "Pump C lasts 25 years." }],
            },
          }),
        );
        const checkpoint = await agent.ok("get_next_step", { planId });
        await agent.ok("request_user_review", {
          planId,
          stepId: checkpoint.step.stepId,
          summary: "Three pumps fit.",
        });
        await expect(card.getByTestId("plan-status")).toHaveText("awaiting review");
        await expect(card.getByTestId("review-card")).toBeVisible();
        // The claims to check, as on the review page: the unsupported one flagged.
        await expect(card.getByTestId("claim")).toHaveAttribute("data-status", "unsupported");
        await expectAccessible(page);
        await keepScreenshot(page, "mcp-app-plan-card");
        // Sent back with feedback: the card says so, as the plan page does, until
        // the agent picks the step up again.
        await card.getByLabel(/Feedback/).fill("Add the 2024 prices.");
        await card.getByRole("button", { name: "Modify with feedback" }).click();
        const checkpointRow = card.getByTestId("plan-steps").getByRole("listitem").nth(1);
        await expect(checkpointRow.getByTestId("step-sent-back")).toHaveText("sent back");
        const redo = await agent.ok("get_next_step", { planId });
        expect(redo.step.stepId).toBe(checkpoint.step.stepId);
        await expect(checkpointRow).toContainText("in progress");
        await expect(checkpointRow.getByTestId("step-sent-back")).toHaveCount(0);
        await agent.ok("request_user_review", {
          planId,
          stepId: checkpoint.step.stepId,
          summary: "Three pumps fit, with 2024 prices.",
        });
        await expect(card.getByTestId("review-card")).toBeVisible();
        await card.getByRole("button", { name: "Approve" }).click();
        await expect(card.getByTestId("plan-card-decided")).toContainText("Approved");

        const last = await agent.ok("get_next_step", { planId });
        await agent.ok("submit_step_result", plainResult(planId, last.step.stepId));
        await expect(card.getByTestId("plan-status")).toHaveText("completed");
        await expect(card.getByText("3 of 3 steps done")).toBeVisible();
        // What the decision said is updated to what is true now.
        await expect(card.getByTestId("plan-card-decided")).toHaveText(
          "Approved: the step is complete. The plan has completed since.",
        );
      });
    });
  });
}
