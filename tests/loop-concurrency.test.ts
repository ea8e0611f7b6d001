/**
 * The loop's calls racing on one plan, in process, on PostgreSQL 15 (PGlite
 * runs one statement at a time, so nothing races there). The last steps of a
 * plan submitted at the same moment must still complete it, and a step must
 * be handed out once, whichever call waited for whose lock.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { createPlan } from "@/lib/services/plans/create-plan";
import { getNextStep } from "@/lib/services/plans/get-next-step";
import { getPlanStatus } from "@/lib/services/plans/get-plan-status";
import { submitStepResult } from "@/lib/services/plans/submit-step-result";
import type { ServiceContext } from "@/lib/services/shared/context";
import { freshDatabase } from "./support/databases";
import { tenantContext } from "./support/in-process";
import { report } from "./support/mcp-client";

describe("the loop under concurrency on postgres", () => {
  let handle: DatabaseHandle;
  let ctx: ServiceContext;

  beforeAll(async () => {
    handle = await freshDatabase("postgres");
    ctx = await tenantContext(handle.db, "Race");
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("completes a plan whose steps are all submitted at once, every time", async () => {
    const count = 8;
    for (let round = 0; round < 15; round += 1) {
      const { planId } = await createPlan(ctx, {
        name: `Race ${round}`,
        researchQuestion: "q",
        steps: Array.from({ length: count }, (_, i) => ({
          stepType: "search" as const,
          instructions: `part ${i + 1}`,
        })),
      });
      const answers = await Promise.all(
        Array.from({ length: count }, () => getNextStep(ctx, { planId })),
      );
      const ids = answers.map((answer) => (answer.status === "ready" ? answer.step.stepId : ""));
      expect(new Set(ids).size).toBe(count);
      expect(ids).not.toContain("");
      await Promise.all(
        ids.map((stepId, i) =>
          submitStepResult(ctx, { planId, stepId, result: { i }, stepExecutionReport: report }),
        ),
      );
      const status = await getPlanStatus(ctx, { planId });
      expect(status.status, `round ${round}`).toBe("completed");
      expect((await getNextStep(ctx, { planId })).status).toBe("plan_complete");
    }
  });
});
