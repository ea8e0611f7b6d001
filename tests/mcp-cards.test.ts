/**
 * The cards' app-only tools over /api/mcp of the production build, with the
 * real SDK clients of both eras, on both databases (docs/mcp-apps.md, "What
 * is listed to whom", whose table the first test reads row by row and holds
 * to what a client of each row is listed and answered). On 2026-07-28 they
 * are listed to, and callable by, only a request that declares the MCP Apps
 * extension; on 2025-11-25 nothing tells a host from an agent, so they are
 * listed to every client. In both
 * eras, where only people decide, a card's decision is the person's only from
 * a connected app the team names among its trusted apps: an agent CLI a
 * person connected by OAuth that reads the review's id and digest from
 * get_next_step and approves in the card is refused, and the review waits
 * (the issue's reproduction). The use-case rules are
 * tests/use-cases/review-card.test.ts; the cards in a real host,
 * e2e/mcp-apps.spec.ts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeNames, docTable } from "@/lib/docs-table";
import { isAppOnly } from "@/lib/mcp/apps";
import { TOOLS } from "@/lib/mcp/tools";
import { type AppServer, startAppServer } from "./support/app-server";
import { BACKENDS } from "./support/databases";
import {
  CLIENT_REVISIONS,
  type ClientRevision,
  connectAgent,
  connectModernAgent,
  type LoopAgent,
} from "./support/mcp-client";
import { connectAppOverHttp } from "./support/oauth-over-http";
import { signInOverHttp, type WebSession } from "./support/web-session";

const CARD_TOOLS: string[] = TOOLS.filter(isAppOnly).map((tool) => tool.name);

/** A host that renders MCP Apps declares the extension on every 2026-07-28 request. */
const RENDERS_APPS = {
  extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
};

/**
 * docs/mcp-apps.md's table of who is shown and answered which tools: each row
 * a request ("2026-07-28, the client declares the extension", "… does not
 * declare it", "2025-11-25 (and older)"), what its `tools/list` lists and what
 * calling a card's tool answers.
 */
const REQUESTS = docTable("docs/mcp-apps.md", "request");

/** The client a row's request describes, with `credential`. */
function clientOfRequest(request: string, mcpUrl: string, credential: string) {
  const revision = CLIENT_REVISIONS.find((era) => request.startsWith(era));
  if (revision === undefined) throw new Error(`no client for the request "${request}"`);
  return cardClient(revision, mcpUrl, credential, !request.includes("does not declare"));
}

const COUNTS = ["no", "one", "two", "three", "four", "five", "six"];

/** The tools a row's `tools/list` cell says are listed: every tool, or every tool but the cards'. */
function listedPerRow(cell: string): string[] {
  const every = TOOLS.map((tool) => tool.name).sort();
  if (/^every tool(?:, the cards' included)?$/.test(cell)) return every;
  const but = /^every tool but the cards' (\w+)$/.exec(cell);
  if (but?.[1] === COUNTS[CARD_TOOLS.length])
    return every.filter((name) => !CARD_TOOLS.includes(name));
  throw new Error(`a tools/list cell this test does not read: "${cell}"`);
}

/** The refusal of a card's tool to a client that did not declare the Apps extension. */
const NOT_DECLARED =
  /^FORBIDDEN: \w+ is for Cairn's MCP App cards.*io\.modelcontextprotocol\/ui.*review page/;

/**
 * What calling each card's tool answers `agent`, in the words of the table's
 * last column: "answered" (the tool ran; a decision with an unknown review is
 * refused for what it names, not for the client), or `FORBIDDEN` with the
 * extension and the review page named.
 */
async function cardCalls(agent: LoopAgent, planId: string): Promise<string> {
  const answers = await Promise.all(
    CARD_TOOLS.map((name) =>
      agent.call(name, {
        planId,
        ...(name === "decide_in_review_card"
          ? { reviewRequestId: randomUUID(), contentDigest: "0".repeat(64), decision: "approve" }
          : {}),
      }),
    ),
  );
  const refused = answers.filter((answer) => NOT_DECLARED.test(answer.text));
  if (refused.length === answers.length) return "FORBIDDEN";
  if (refused.length > 0) return `mixed: ${refused.map((answer) => answer.text).join(" | ")}`;
  const readers = answers.filter((_, index) => CARD_TOOLS[index]?.startsWith("read_"));
  return readers.every((answer) => !answer.isError)
    ? "answered"
    : `not answered: ${answers.map((answer) => answer.text).join(" | ")}`;
}

/**
 * A client on `revision` with `credential`; on 2026-07-28 one that declares the
 * Apps extension unless `declares` is false.
 */
function cardClient(
  revision: ClientRevision,
  mcpUrl: string,
  credential: string,
  declares = true,
): Promise<LoopAgent & { listed(): Promise<string[]> }> {
  const listed = (client: { listTools(): Promise<{ tools: { name: string }[] }> }) => async () =>
    (await client.listTools()).tools.map((tool) => tool.name);
  return revision === "2026-07-28"
    ? connectModernAgent(mcpUrl, credential, declares ? { capabilities: RENDERS_APPS } : {}).then(
        (agent) => ({ ...agent, listed: listed(agent.client) }),
      )
    : connectAgent(mcpUrl, credential).then((agent) => ({
        ...agent,
        listed: listed(agent.client),
      }));
}

describe.each(BACKENDS)("the cards' tools over /api/mcp (%s)", (backend) => {
  let app: AppServer;
  let admin: WebSession;
  /** An agent's command line a person connected by OAuth. */
  let cli: { clientId: string; accessToken: string };
  /** The chat host the team names among its trusted apps. */
  let host: { clientId: string; accessToken: string };

  beforeAll(async () => {
    app = await startAppServer(backend);
    admin = await signInOverHttp(app.url, app.tenantA.email);
    cli = await connectAppOverHttp(app, admin, "Agent CLI");
    host = await connectAppOverHttp(app, admin, "Chat host");
    const saved = await admin.action("/admin", "setDecisionPolicyAction", {
      decisionPolicy: "people_only",
    });
    expect(saved.status).toBe(200);
  });
  afterAll(async () => {
    await app?.stop();
  });

  /** The trusted apps: none named, or the one app `clientId`. */
  async function trust(clientId: string | null) {
    const saved = await admin.action(
      "/admin",
      "setTrustedClientsAction",
      clientId === null ? { trust: "every" } : { trust: "only", clientIds: clientId },
    );
    expect(saved.status).toBe(200);
  }

  /** A plan whose checkpoint waits for the review `agent` asked for. */
  async function planAtReview(agent: LoopAgent) {
    const { planId } = await agent.ok("create_research_plan", {
      name: "Card over the wire",
      researchQuestion: "Which heat pump?",
      steps: [
        { stepType: "checkpoint", instructions: "Confirm the shortlist with the person." },
        { stepType: "synthesize", instructions: "Write the answer." },
      ],
    });
    const next = await agent.ok("get_next_step", { planId });
    await agent.ok("request_user_review", {
      planId,
      stepId: next.step.stepId,
      summary: "Three pumps fit.",
      proposedResult: { shortlist: ["A", "B", "C"] },
    });
    return planId as string;
  }

  it("lists and answers the cards' tools to each request as docs/mcp-apps.md's table says", async () => {
    expect(CARD_TOOLS).toEqual(["read_review_card", "decide_in_review_card", "read_plan_card"]);
    expect(REQUESTS.length).toBeGreaterThanOrEqual(3);
    const plain = await connectModernAgent(app.mcpUrl, cli.accessToken);
    try {
      const planId = await planAtReview(plain);
      for (const [request = "", listed = "", calling = ""] of REQUESTS) {
        const agent = await clientOfRequest(request, app.mcpUrl, host.accessToken);
        try {
          expect((await agent.listed()).sort(), request).toEqual(listedPerRow(listed));
          // "answered; …" or "`FORBIDDEN`, naming the extension and the review page".
          const said = codeNames(calling)[0] ?? calling.split(";")[0];
          expect(await cardCalls(agent, planId), request).toBe(said);
        } finally {
          await agent.close();
        }
      }
      // The review card's link for the person goes only to a client that renders no card.
      const rendersModern = await connectModernAgent(app.mcpUrl, host.accessToken, {
        capabilities: RENDERS_APPS,
      });
      const waiting = async (agent: typeof plain) =>
        (await agent.client.callTool({ name: "get_next_step", arguments: { planId } })).content;
      try {
        expect(await waiting(plain)).toEqual([
          expect.objectContaining({ type: "text" }),
          { type: "text", text: expect.stringContaining(`/plans/${planId}#review`) },
        ]);
        expect(await waiting(rendersModern)).toHaveLength(1);
      } finally {
        await rendersModern.close();
      }
      expect((await plain.ok("get_plan_status", { planId })).status).toBe("awaiting_review");
    } finally {
      await plain.close();
    }
  });

  for (const revision of CLIENT_REVISIONS) {
    it(`refuses an agent CLI connected by OAuth that approves in the card with what get_next_step told it, and counts a named app's decision as the person's (${revision})`, async () => {
      await trust(null);
      // On 2026-07-28 the CLI even declares the extension: the trusted apps still decide.
      const agent = await cardClient(revision, app.mcpUrl, cli.accessToken);
      const chat = await cardClient(revision, app.mcpUrl, host.accessToken);
      try {
        const planId = await planAtReview(agent);
        const waiting = await agent.ok("get_next_step", { planId });
        expect(waiting.status).toBe("awaiting_review");
        const decision = {
          planId,
          reviewRequestId: waiting.review.reviewRequestId,
          contentDigest: waiting.review.contentDigest,
          decision: "approve",
        };
        const refused = await agent.fails("decide_in_review_card", decision);
        expect(refused).toMatch(/^FORBIDDEN: This team lets only people decide checkpoints/);
        expect(refused).toBe(await agent.fails("submit_user_decision", decision));
        // No app is named yet: the chat host proves no person either.
        expect(await chat.fails("decide_in_review_card", decision)).toBe(refused);
        expect((await agent.ok("read_review_card", { planId })).decideHere).toMatchObject({
          allowed: false,
          as: "agent",
        });
        expect(await agent.ok("get_plan_status", { planId })).toMatchObject({
          status: "awaiting_review",
          steps: [{ status: "awaiting_input" }, { status: "pending" }],
        });

        await trust(host.clientId);
        expect(await agent.fails("decide_in_review_card", decision)).toBe(refused);
        expect((await chat.ok("read_review_card", { planId })).decideHere).toEqual({
          allowed: true,
          as: "person",
          reason: null,
        });
        const decided = await chat.ok("decide_in_review_card", decision);
        expect(decided).toMatchObject({ channel: "client", stepStatus: "completed" });
        const context = await agent.ok("get_research_context", { planId });
        expect(context.reviews[0].decision).toMatchObject({
          channel: "client",
          decidedBy: `the user of app "Chat host" of ${app.tenantA.email}, answering in the MCP client "Cairn's review card"`,
        });
      } finally {
        await Promise.all([agent.close(), chat.close()]);
      }
    });
  }
});
