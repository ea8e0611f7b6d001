/**
 * A cursor names its list, over both doors of the production build:
 * list_active_plans (through a client of each protocol era) and the web's plans
 * list read the same plans in the same order, and each refuses the other's
 * cursor: the tool with a VALIDATION_ERROR result, the page with its notice and
 * a link to its first page; each still reads its own. The same in process, on
 * both databases: tests/use-cases/paged-lists.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type AppServer, startAppServer } from "./support/app-server";
import { CLIENT_REVISIONS, connectAgentOn } from "./support/mcp-client";
import { signInOverHttp } from "./support/web-session";

/** More plans than the plans page's first page (20) shows. */
const PLANS = 21;

let app: AppServer;

beforeAll(async () => {
  app = await startAppServer("pglite");
  const agent = await connectAgentOn("2025-11-25", app.mcpUrl, app.tenantA.key);
  try {
    for (let i = 1; i <= PLANS; i += 1) {
      await agent.ok("create_research_plan", {
        name: `Listed ${i}`,
        researchQuestion: "q",
        steps: [{ stepType: "search", instructions: "Step 1: search." }],
      });
    }
  } finally {
    await agent.close();
  }
});
afterAll(async () => {
  await app?.stop();
});

/** The cursor of the plans page's link to its next page. */
function nextPageCursor(html: string): string {
  const cursor = /\/plans\?(?:[^"]*?&amp;)?cursor=([\w-]+)/.exec(html)?.[1];
  if (!cursor) throw new Error("the plans page links to no next page");
  return cursor;
}

describe.each(CLIENT_REVISIONS)(
  "list_active_plans over a %s client and the plans page",
  (revision) => {
    it("refuse each other's cursors, and read their own", async () => {
      const agent = await connectAgentOn(revision, app.mcpUrl, app.tenantA.key);
      onTestFinished(() => agent.close());
      const web = await signInOverHttp(app.url, app.tenantA.email);

      const webCursor = nextPageCursor(await (await web.get("/plans")).text());
      expect(await agent.fails("list_active_plans", { cursor: webCursor })).toMatch(
        /^VALIDATION_ERROR: cursor is not one this list gave: pass the previous answer's nextCursor, or leave it out for the first page/,
      );
      const { nextCursor } = await agent.ok("list_active_plans", { limit: 1 });
      const refused = await web.get(`/plans?cursor=${nextCursor}`);
      expect(refused.status).toBe(200);
      const notice = await refused.text();
      expect(notice).toContain('data-testid="cursor-refused"');
      expect(notice).toContain("was not made by this list");

      expect(
        (await agent.ok("list_active_plans", { limit: 1, cursor: nextCursor })).plans,
      ).toHaveLength(1);
      const own = await (await web.get(`/plans?cursor=${webCursor}`)).text();
      expect(own).not.toContain('data-testid="cursor-refused"');
      // The second page: the oldest plan, and not the newest.
      expect(own).toMatch(/>Listed 1</);
      expect(own).not.toMatch(/>Listed 21</);
    });
  },
);
