/**
 * The set-up the review tests share (deadlines, snooze, escalation chains): a
 * plan whose checkpoint waits for a review, a review's row, the scheduler's
 * settings, and on PostgreSQL two pools of one database with four schedulers
 * racing across them.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/lib/db/client";
import { reviewRequests } from "@/lib/db/schema";
import { createPostgresDatabase } from "./databases";
import { type InProcessAgent, planSteps } from "./in-process";

/** What the scheduler's passes take in these tests. */
export const SCHEDULER_SETTINGS = { stallThresholdSeconds: 1800 };
/** How long a test waits for the scheduler's timer, polling. */
export const POLL = { timeout: 15_000, interval: 100 };

/** A new plan whose checkpoint (its first step) waits for a review; `extra` goes to request_user_review. */
export async function pendingReview(
  agent: InProcessAgent,
  name = "Review",
  extra: Record<string, unknown> = {},
) {
  const created = await agent.ok("create_research_plan", {
    name,
    researchQuestion: "q",
    steps: planSteps("checkpoint", "synthesize"),
  });
  const next = await agent.ok("get_next_step", { planId: created.planId });
  const review = await agent.ok("request_user_review", {
    planId: created.planId,
    stepId: next.step.stepId,
    summary: `Check ${name}.`,
    ...extra,
  });
  return { planId: created.planId as string, reviewRequestId: review.reviewRequestId as string };
}

export async function reviewRow(db: DatabaseHandle["db"], id: string) {
  const [row] = await db.select().from(reviewRequests).where(eq(reviewRequests.id, id));
  if (!row) throw new Error(`no review ${id}`);
  return row;
}

/**
 * Two pools of one fresh, migrated PostgreSQL database, as two instances of
 * Cairn have, opened before the describe block's tests and closed after.
 */
export function useTwoPools() {
  const pools = {} as { first: DatabaseHandle; second: DatabaseHandle };
  beforeAll(async () => {
    const url = await createPostgresDatabase();
    pools.first = await openDatabase({ kind: "postgres", url });
    await pools.first.migrate();
    pools.second = await openDatabase({ kind: "postgres", url });
  });
  afterAll(async () => {
    await pools.first?.close();
    await pools.second?.close();
  });
  return pools;
}

/** Four passes of a scheduler at once, two on each pool; how many items they applied in all. */
export async function raceFour(
  pools: { first: DatabaseHandle; second: DatabaseHandle },
  pass: (db: DatabaseHandle["db"]) => Promise<number>,
): Promise<number> {
  const runs = await Promise.all([
    pass(pools.first.db),
    pass(pools.second.db),
    pass(pools.first.db),
    pass(pools.second.db),
  ]);
  return runs.reduce((a, b) => a + b, 0);
}
