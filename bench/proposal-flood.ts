/**
 * The proposal flood of issue 29: one team's agent puts the largest proposal
 * Cairn accepts up for review on 45 plans, then loops request_user_review and
 * modify on one step until Cairn refuses (at most 60 times), and a signed-in
 * person of that team refreshes the inbox as its page does every 4 s;
 * meanwhile another team's agent pings over MCP. Reports the other team's ping latency before (idle),
 * during the flood and during the refreshes, and the sizes of what the pages
 * send. Runs the production server (`npm run build` first) on a throwaway
 * PGlite folder:
 *
 *   npm run bench:flood
 *
 * CAIRN_FLOOD_PROPOSAL_BYTES sets the proposal's JSON size (default: the limit,
 * MAX_RESULT_BYTES); above the limit every request is refused, and counted.
 */
import { MAX_RESULT_BYTES } from "@/lib/services/shared/fields";
import { startAppServer } from "@/tests/support/app-server";
import { type Agent, connectAgent } from "@/tests/support/mcp-client";
import { signInOverHttp } from "@/tests/support/web-session";
import { type LatencySummary, sleep, summarise, timed } from "./support/stats";

const PLANS = 45;
/** The most request/modify cycles tried on the one step (the issue's 60 calls), if Cairn allows them. */
const CYCLES = 60;
const REFRESHES = 4;
const PING_EVERY_MS = 50;
const PROPOSAL_BYTES = Number(process.env.CAIRN_FLOOD_PROPOSAL_BYTES ?? MAX_RESULT_BYTES);

/** A proposal of rows whose JSON text is at most `bytes` long, as close to it as the rows allow. */
function proposal(bytes: number): { rows: string[] } {
  const row = "A finding of the flood, with its source, its figures and a note on them.";
  const rows: string[] = [];
  let size = JSON.stringify({ rows: [] }).length;
  while (size + row.length + 3 <= bytes) {
    rows.push(row);
    size += row.length + 3;
  }
  return { rows };
}

/** Pings with `agent` every PING_EVERY_MS until stopped; the samples are the round trips in ms. */
function pinging(agent: Agent) {
  const samples: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      await timed(samples, () => agent.client.ping());
      await sleep(PING_EVERY_MS);
    }
  })();
  return {
    async stop(): Promise<LatencySummary & { max: number }> {
      running = false;
      await loop;
      return { ...summarise(samples), max: Math.round(Math.max(...samples) * 10) / 10 };
    },
  };
}

async function main() {
  const app = await startAppServer("pglite");
  const alpha = await connectAgent(app.mcpUrl, app.tenantA.key);
  const beta = await connectAgent(app.mcpUrl, app.tenantB.key);
  try {
    const person = await signInOverHttp(app.url, app.tenantA.email);
    const proposed = proposal(PROPOSAL_BYTES);
    const proposalBytes = Buffer.byteLength(JSON.stringify(proposed));

    const idle = pinging(beta);
    await sleep(3_000);
    const idlePings = await idle.stop();

    // The flood: a pending review with the largest proposal on each of PLANS plans.
    const flood = pinging(beta);
    const requestMs: number[] = [];
    let refused = 0;
    let firstPlan: string | undefined;
    for (let i = 0; i < PLANS; i += 1) {
      const plan = await alpha.ok("create_research_plan", {
        name: `Flood ${i + 1}`,
        researchQuestion: "How much can one team send?",
        steps: [{ stepType: "analyze", instructions: "Analyse the flood." }],
      });
      firstPlan ??= plan.planId;
      const next = await alpha.ok("get_next_step", { planId: plan.planId });
      const answer = await timed(requestMs, () =>
        alpha.call("request_user_review", {
          planId: plan.planId,
          stepId: next.step.stepId,
          summary: "Please accept the whole table.",
          proposedResult: proposed,
        }),
      );
      if (answer.isError) refused += 1;
    }
    // A second plan's one step, reviewed and modified until Cairn refuses another review (or CYCLES).
    const looped = await alpha.ok("create_research_plan", {
      name: "Flood loop",
      researchQuestion: "How often can one step be reviewed?",
      steps: [{ stepType: "analyze", instructions: "Analyse the loop." }],
    });
    const loopStep = (await alpha.ok("get_next_step", { planId: looped.planId })).step.stepId;
    let cycles = 0;
    let loopRefusal = "none";
    while (cycles < CYCLES) {
      const review = await alpha.call("request_user_review", {
        planId: looped.planId,
        stepId: loopStep,
        summary: `Round ${cycles + 1}.`,
        proposedResult: proposed,
      });
      if (review.isError) {
        loopRefusal = review.text;
        break;
      }
      cycles += 1;
      await alpha.ok("submit_user_decision", {
        planId: looped.planId,
        reviewRequestId: (review.data as { reviewRequestId: string }).reviewRequestId,
        decision: "modify",
        feedback: "Once more, please.",
      });
    }
    const floodPings = await flood.stop();

    // The person's inbox, refreshed as the page does (a full load, then RSC refreshes).
    const refreshing = pinging(beta);
    const inboxMs: number[] = [];
    const inboxBytes: number[] = [];
    for (let i = 0; i < REFRESHES; i += 1) {
      const response = await timed(inboxMs, async () => {
        const answer = await person.get("/inbox");
        return answer.text();
      });
      inboxBytes.push(Buffer.byteLength(response));
    }
    const refreshPings = await refreshing.stop();
    const planPage = await (await person.get(`/plans/${looped.planId}`)).text();
    const firstPlanPage = firstPlan ? await (await person.get(`/plans/${firstPlan}`)).text() : "";

    const kb = (bytes: number) => `${Math.round(bytes / 1024)} KB`;
    const row = (name: string, s: LatencySummary & { max: number }) =>
      `| ${name} | ${s.count} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${s.max.toFixed(1)} |`;
    console.log(
      [
        `Proposal: ${kb(proposalBytes)} of JSON (${proposalBytes} bytes; limit ${MAX_RESULT_BYTES}).`,
        `${PLANS} request_user_review: ${PLANS - refused} accepted, ${refused} refused; p50 ${summarise(requestMs).p50.toFixed(1)} ms.`,
        `One step: ${cycles} request/modify cycles, then: ${loopRefusal.slice(0, 120)}`,
        `Inbox page: ${inboxBytes.map(kb).join(", ")}; ${inboxMs.map((ms) => `${Math.round(ms)} ms`).join(", ")}.`,
        `Plan pages: the looped plan ${kb(Buffer.byteLength(planPage))}, a flooded plan ${kb(Buffer.byteLength(firstPlanPage))}.`,
        "",
        "The other team's MCP ping (ms):",
        "",
        "| while | pings | p50 | p99 | max |",
        "| --- | --- | --- | --- | --- |",
        row("idle", idlePings),
        row("the flood", floodPings),
        row(`${REFRESHES} inbox loads`, refreshPings),
      ].join("\n"),
    );
  } finally {
    await alpha.close();
    await beta.close();
    await app.stop();
  }
}

await main();
