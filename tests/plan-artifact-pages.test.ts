/**
 * A page of a plan's artifacts reads its rows, not all of the plan's: a plan
 * takes any number of artifacts (store_research has no cap per plan), and its
 * pages (get_research_context, get_step_context) and the plan page's newest
 * few were read through an index of the plan alone, every artifact of the
 * plan fetched and sorted for each page. The generic plans of both reads,
 * made on a table of a few rows, go through the plan's index by time and id
 * (`research_artifact_plan_idx`) in their order, with no sort, on PGlite and
 * on PostgreSQL 15; and paging walks every artifact once, in that order.
 */
import type { SQL } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  artifactPageQuery,
  artifactsOrder,
  loadArtifactPage,
} from "@/lib/services/research/context-pages";
import { newestArtifactsQuery } from "@/lib/services/research/plan-artifacts";
import { BACKENDS } from "./support/databases";
import { genericPlanOf } from "./support/generic-plan";
import { planSteps, useFreshTenant } from "./support/in-process";

describe.each(BACKENDS)("a page of a plan's artifacts on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  let planId: string;
  const stored: string[] = [];

  beforeAll(async () => {
    const { agent } = tenant;
    ({ planId } = await agent.ok("create_research_plan", {
      name: "Many findings",
      researchQuestion: "q",
      steps: planSteps("search"),
    }));
    for (let i = 0; i < 5; i += 1) {
      const { artifactId } = await agent.ok("store_research", {
        artifactType: "finding",
        title: `Finding ${i}`,
        content: { i },
        contentText: `Finding ${i}: what the sources say.`,
        confidence: 0.5,
        planId,
      });
      stored.push(artifactId);
    }
  });

  const planOf = (query: { getSQL(): SQL }) =>
    genericPlanOf(tenant.handle.db, query.getSQL(), { seqScans: false });

  it("reads the plan page's newest from the end of the plan's index, unsorted", async () => {
    const lines = await planOf(
      newestArtifactsQuery(tenant.handle.db, tenant.agent.ctx, planId, 10),
    );
    expect(lines).toContain("research_artifact_plan_idx");
    expect(lines).not.toMatch(/Sort/);
  });

  it("reads each page from its cursor on in the plan's index, unsorted, every artifact once", async () => {
    const first = await planOf(
      artifactPageQuery(tenant.handle.db, tenant.agent.ctx, planId, artifactsOrder(undefined), 3),
    );
    expect(first).toContain("research_artifact_plan_idx");
    expect(first).not.toMatch(/Sort/);

    const seen: string[] = [];
    let cursor: string | undefined;
    let later: string | undefined;
    do {
      const page = await loadArtifactPage(tenant.handle.db, tenant.agent.ctx, planId, {
        cursor,
        limit: 2,
      });
      seen.push(...page.artifacts.map((artifact) => artifact.artifactId));
      cursor = page.artifactsNextCursor ?? undefined;
      later ??= cursor;
    } while (cursor);
    expect(seen).toEqual(stored);

    const next = await planOf(
      artifactPageQuery(tenant.handle.db, tenant.agent.ctx, planId, artifactsOrder(later), 3),
    );
    expect(next).toContain("research_artifact_plan_idx");
    expect(next).not.toMatch(/Sort/);
  });
});
