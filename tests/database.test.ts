import { and, asc, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { planSteps, researchArtifacts, researchPlans, tenants } from "@/lib/db/schema";
import { OPEN_STEP_STATUSES } from "@/lib/plan-engine/states";
import { BACKENDS, freshDatabase } from "./support/databases";
import { readRows } from "./support/rows";

describe.each(BACKENDS)("the database on %s", (backend) => {
  let handle: DatabaseHandle;
  let tenantId: string;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    const [tenant] = await handle.db.insert(tenants).values({ name: "Acme" }).returning();
    if (!tenant) throw new Error("no tenant");
    tenantId = tenant.id;
  });
  afterAll(async () => {
    await handle.close();
  });

  it("applies every migration and creates the spec's tables", async () => {
    const tables = await readRows<{ table_name: string }>(
      handle.db,
      sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual([
      "account_audit_log",
      "api_key",
      "app_user",
      "attempt_limit",
      "email_delivery",
      "mcp_tool_call_log",
      "notification_event",
      "oauth_authorization_code",
      "oauth_client",
      "oauth_grant",
      "oauth_token",
      "plan_audit_head",
      "plan_audit_log",
      "plan_audit_signature",
      "plan_branching_condition",
      "plan_revision",
      "plan_source",
      "plan_step",
      "plan_step_definition",
      "research_artifact",
      "research_feedback",
      "research_output",
      "research_plan",
      "review_approval",
      "review_decision",
      "review_request",
      "review_snooze",
      "setup_code",
      "skill_execution",
      "step_claim",
      "team_audit_log",
      "tenant",
      "webhook_delivery",
      "webhook_endpoint",
    ]);
    const applied = await readRows<{ n: number }>(
      handle.db,
      sql`select count(*)::int as n from drizzle.__drizzle_migrations`,
    );
    expect(applied[0]?.n).toBeGreaterThan(0);
  });

  it("migrating again is a no-op", async () => {
    await expect(handle.migrate()).resolves.toBeUndefined();
  });

  it("has the partial indexes the hot queries use", async () => {
    const indexes = await readRows<{ indexname: string; indexdef: string }>(
      handle.db,
      sql`select indexname, indexdef from pg_indexes where tablename = 'plan_step'`,
    );
    const byName = new Map(indexes.map((i) => [i.indexname, i.indexdef]));
    // The statuses the loop's statements name (`openStep`): the index serves them only if equal.
    const open = OPEN_STEP_STATUSES.map((status) => `'${status}'::step_status`).join(", ");
    expect(byName.get("plan_step_open_idx")).toContain(
      `(plan_id, step_order) WHERE (status = ANY (ARRAY[${open}]))`,
    );
    expect(byName.get("plan_step_awaiting_input_idx")).toMatch(/WHERE \(status = 'awaiting_input'/);
    expect(byName.get("plan_step_in_progress_order_idx")).toMatch(/WHERE \(status = 'in_progress'/);
    // Nothing reads a team's steps in progress by their start, so no claim writes them there.
    expect(byName.has("plan_step_in_progress_idx")).toBe(false);
  });

  it("keeps the artifacts' search vector itself and indexes it for both search sides", async () => {
    const extensions = await readRows<{ extname: string }>(
      handle.db,
      sql`select extname from pg_extension where extname = 'pg_trgm'`,
    );
    expect(extensions).toHaveLength(1);
    const indexes = await readRows<{ indexname: string; indexdef: string }>(
      handle.db,
      sql`select indexname, indexdef from pg_indexes where tablename = 'research_artifact'`,
    );
    const byName = new Map(indexes.map((i) => [i.indexname, i.indexdef]));
    expect(byName.get("research_artifact_search_idx")).toMatch(/USING gin \(search_vector\)/);
    expect(byName.get("research_artifact_title_trgm_idx")).toMatch(
      /USING gin \(title gin_trgm_ops\)/,
    );
    const statistics = await readRows<{ n: number | null }>(
      handle.db,
      sql`select attstattarget::int as n from pg_attribute where attrelid = 'research_artifact'::regclass and attname = 'title'`,
    );
    expect(statistics[0]?.n).toBe(0);
    const [artifact] = await handle.db
      .insert(researchArtifacts)
      .values({
        tenantId,
        artifactType: "finding",
        title: "Recycling batteries",
        content: {},
        contentText: "Europe recycled most lithium cells.",
      })
      .returning({ searchVector: researchArtifacts.searchVector });
    // Stemmed, weighted: the title's words carry A, the body's B.
    expect(artifact?.searchVector).toContain("'batteri':2A");
    expect(artifact?.searchVector).toContain("'recycl':1A,4B");
  });

  it("stores timestamps with time zone", async () => {
    const columns = await readRows<{ data_type: string }>(
      handle.db,
      sql`select distinct data_type from information_schema.columns where table_schema = 'public' and column_name like '%_at'`,
    );
    expect(columns.map((c) => c.data_type)).toEqual(["timestamp with time zone"]);
  });

  async function seedPlan(steps: number) {
    const [plan] = await handle.db
      .insert(researchPlans)
      .values({ tenantId, name: "p", researchQuestion: "q" })
      .returning();
    if (!plan) throw new Error("no plan");
    if (steps > 0)
      await handle.db.insert(planSteps).values(
        Array.from({ length: steps }, (_, i) => ({
          tenantId,
          planId: plan.id,
          stepOrder: i + 1,
          stepType: "search" as const,
          instructions: `step ${i + 1}`,
        })),
      );
    return plan.id;
  }

  it("serialises read-modify-write transactions with SELECT ... FOR UPDATE", async () => {
    const planId = await seedPlan(0);
    const increments = 12;
    await Promise.all(
      Array.from({ length: increments }, () =>
        handle.db.transaction(async (tx) => {
          const [row] = await tx
            .select({ name: researchPlans.name })
            .from(researchPlans)
            .where(eq(researchPlans.id, planId))
            .for("update");
          // Yield between the read and the write so an unlocked version would interleave.
          await new Promise((resolve) => setTimeout(resolve, 2));
          await tx
            .update(researchPlans)
            .set({ name: `${row?.name}+` })
            .where(eq(researchPlans.id, planId));
        }),
      ),
    );
    const [plan] = await handle.db
      .select({ name: researchPlans.name })
      .from(researchPlans)
      .where(eq(researchPlans.id, planId));
    expect(plan?.name).toBe(`p${"+".repeat(increments)}`);
  });

  it("hands each pending row to exactly one claimer with FOR UPDATE SKIP LOCKED", async () => {
    const planId = await seedPlan(20);
    const claims = await Promise.all(
      Array.from({ length: 20 }, () =>
        handle.db.transaction(async (tx) => {
          const [step] = await tx
            .select({ id: planSteps.id })
            .from(planSteps)
            .where(and(eq(planSteps.planId, planId), eq(planSteps.status, "pending")))
            .orderBy(asc(planSteps.stepOrder))
            .limit(1)
            .for("update", { skipLocked: true });
          if (!step) return undefined;
          await tx
            .update(planSteps)
            .set({ status: "in_progress", startedAt: new Date() })
            .where(eq(planSteps.id, step.id));
          return step.id;
        }),
      ),
    );
    const claimed = claims.filter((id): id is string => id !== undefined);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.length).toBe(20);
  });

  it("rolls a failed transaction back entirely", async () => {
    const planId = await seedPlan(1);
    await expect(
      handle.db.transaction(async (tx) => {
        await tx.update(researchPlans).set({ name: "changed" }).where(eq(researchPlans.id, planId));
        await tx.insert(planSteps).values({
          tenantId,
          planId: "00000000-0000-0000-0000-000000000000",
          stepOrder: 1,
          stepType: "search",
          instructions: "orphan",
        });
      }),
    ).rejects.toThrow();
    const [plan] = await handle.db
      .select({ name: researchPlans.name })
      .from(researchPlans)
      .where(eq(researchPlans.id, planId));
    expect(plan?.name).toBe("p");
  });
});
