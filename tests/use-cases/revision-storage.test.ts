/**
 * What a plan's revisions store (docs/history-and-forks.md, security review
 * of issue 40): each step definition once per plan, by digest, so a change
 * writes what it changed. Before, every change copied every step's whole
 * definition: one update_step_instructions of a plan of 200 steps of 84 KB
 * wrote 17 MB to plan_revision. And a database migrated from 0025 with
 * revisions in it keeps their history and can revert to them. In process,
 * on PGlite and on PostgreSQL 15.
 */
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import type { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, MIGRATIONS_FOLDER, openDatabase } from "@/lib/db/client";
import { MAX_PLAN_STEPS } from "@/lib/plan-engine/modify";
import { DIFF_VALUE_CHARS } from "@/lib/plan-engine/revisions";
import { BACKENDS, type Backend, createPostgresDatabase } from "../support/databases";
import {
  type InProcessAgent,
  inProcessAgent,
  tenantContext,
  useFreshTenant,
} from "../support/in-process";
import { bytesDuring, type MeteredDatabase, meteredDatabase } from "../support/metered-database";
import { readRows } from "../support/rows";

/** The bytes a plan's revisions hold: their step lists and diffs, and its kept definitions. */
async function revisionBytes(db: Database, planId: string): Promise<number> {
  const [row] = await readRows<{ bytes: number }>(
    db,
    sql`select (select coalesce(sum(octet_length(steps::text) + octet_length(diff::text)), 0)
                  from plan_revision where plan_id = ${planId})
             + (select coalesce(sum(octet_length(definition::text)), 0)
                  from plan_step_definition where plan_id = ${planId}) as bytes`,
  );
  return Number(row?.bytes);
}

/** A plan of `count` steps of `chars` characters each, and what one short rewrite of a step adds to its revisions. */
async function bytesOfOneChange(agent: InProcessAgent, db: Database, count: number, chars: number) {
  const created = (await agent.ok("create_research_plan", {
    name: `Plan of ${count} × ${chars}`,
    researchQuestion: "How much does a revision keep?",
    steps: Array.from({ length: count }, (_, i) => ({
      stepType: "analyze",
      instructions: `${String(i).padStart(4, "0")}${"w".repeat(chars - 4)}`,
    })),
  })) as { planId: string; steps: { stepId: string }[] };
  const before = await revisionBytes(db, created.planId);
  await agent.ok("modify_plan", {
    planId: created.planId,
    action: "update_step_instructions",
    stepId: created.steps[count - 1]?.stepId,
    instructions: "Compare by cost.",
    modificationRationale: "Shorter.",
  });
  return (await revisionBytes(db, created.planId)) - before;
}

describe.each(BACKENDS)("revision storage on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("writes the same few bytes for one small change however long the plan's steps are", async () => {
    const small = await bytesOfOneChange(tenant.agent, tenant.handle.db, 60, 10);
    // 800,000 characters: most of the 1 MB a plan's definitions may hold.
    const large = await bytesOfOneChange(tenant.agent, tenant.handle.db, 40, 20_000);
    // The step list (an id, a place and a digest per step), the diff with its
    // values cut to 400 characters, and the one new definition: 0.8 MB
    // before, when the large plan's steps were copied whole.
    expect(large).toBeLessThan(16 * 1024);
    expect(Math.abs(large - small)).toBeLessThan(2 * 400 * 4);
  });

  it("keeps a definition once when a revert brings it back, and restores it", async () => {
    const created = (await tenant.agent.ok("create_research_plan", {
      name: "Back and forth",
      researchQuestion: "q",
      steps: [
        { stepType: "analyze", instructions: "a".repeat(20_000) },
        { stepType: "analyze", instructions: "b" },
      ],
    })) as { planId: string; steps: { stepId: string }[] };
    const { planId } = created;
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "update_step_instructions",
      stepId: created.steps[0]?.stepId,
      instructions: "short",
      modificationRationale: "Shorter.",
    });
    await tenant.agent.ok("modify_plan", {
      planId,
      action: "revert_revision",
      revision: 1,
      modificationRationale: "Back.",
    });
    const definitions = await readRows<{ n: number }>(
      tenant.handle.db,
      sql`select count(*)::int as n from plan_step_definition where plan_id = ${planId}`,
    );
    expect(definitions[0]?.n).toBe(3);
    const [restored] = await readRows<{ whole: boolean }>(
      tenant.handle.db,
      sql`select instructions = repeat('a', 20000) as whole from plan_step
          where id = ${created.steps[0]?.stepId}`,
    );
    expect(restored?.whole).toBe(true);
  });
});

describe.each(BACKENDS)("a team's deletion on %s", (backend) => {
  const tenant = useFreshTenant(backend);

  it("takes the team's step definitions with it by their tenant's index, and only those", async () => {
    const db = tenant.handle.db;
    const plansOf = async (name: string) => {
      const ctx = await tenantContext(db, name);
      await inProcessAgent(ctx).ok("create_research_plan", {
        name: `${name}'s plan`,
        researchQuestion: "q",
        steps: [{ stepType: "analyze", instructions: `${name} compares.` }],
      });
      return ctx.tenantId;
    };
    const leaving = await plansOf("Leaving");
    const staying = await plansOf("Staying");
    // The cascade deletes by tenant: with scans off, the plan says whether an index serves it.
    const plan = await db.transaction(async (tx) => {
      await tx.execute(sql`set local enable_seqscan = off`);
      return readRows<{ "QUERY PLAN": string }>(
        tx,
        sql`explain delete from plan_step_definition where tenant_id = ${leaving}`,
      );
    });
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain(
      "plan_step_definition_tenant_idx",
    );
    await db.execute(sql`delete from tenant where id = ${leaving}`);
    const left = await readRows<{ tenantId: string }>(
      db,
      sql`select distinct tenant_id as "tenantId" from plan_step_definition
          where tenant_id in (${leaving}, ${staying})`,
    );
    expect(left).toEqual([{ tenantId: staying }]);
  });
});

/**
 * What one change that moves steps of a plan at its size limits may read:
 * modify_plan's own read of every step's place, status and bindings (not the
 * other steps' instructions), and the revision's: each step's id, place and
 * digest, a fingerprint of each changed step's instructions and arguments,
 * and the cut values of the few entries the diff shows. Before, the revision
 * read both definitions of every renumbered step whole: each change read 20.0
 * MB on both databases; then 4.1 MB, almost all of it every step's
 * 20,000-character instructions, which modify_plan read; now about 146 KB.
 */
const CHANGE_BYTES = 512 * 1024;

/**
 * A server-run step's arguments binding the first step's result, longer than
 * a diff shows, with quotes, commas and colons in a string: written in
 * jsonb's key order (shorter keys first), as the diff read them back before.
 */
/** A step's instructions in the plan below: 199 of them and the rest within the plan's 1 MB. */
const LONG_INSTRUCTIONS = 3_900;

const boundArguments = (order: number) => ({
  text: `{{steps.${order}.result.x}}`,
  schema: {
    type: "object",
    properties: { price: { type: "number" } },
    description: 'A "quoted", spaced: note. '.repeat(40),
  },
});

describe.each(BACKENDS)("what a change's revision reads on %s", (backend) => {
  let metered: MeteredDatabase;
  let agent: InProcessAgent;
  let planId: string;

  beforeAll(async () => {
    metered = await meteredDatabase(backend);
    agent = inProcessAgent(await tenantContext(metered.db, "Alpha"));
    // The most steps, their definitions together at the plan's limit of 1 MB
    // (MAX_PLAN_DEFINITION_BYTES), and each after the first binding the
    // first's result: a step added or removed in front renumbers every
    // binding, so every kept step gets a new definition and digest.
    const created = (await agent.ok("create_research_plan", {
      name: "Bound to its first step",
      researchQuestion: "What does a renumbering read?",
      // One fewer than the most, so a step can be added.
      steps: Array.from({ length: MAX_PLAN_STEPS - 1 }, (_, i) => ({
        stepType: "analyze",
        instructions: `${String(i).padStart(4, "0")}${"w".repeat(LONG_INSTRUCTIONS - 4)}`,
        ...(i > 0 ? { inputs: { x: "{{steps.1.result.x}}" } } : {}),
        ...(i === 1 ? { tool: "extract_data", arguments: boundArguments(1) } : {}),
        outputSchema: {
          type: "object",
          description: "d".repeat(1_000),
          properties: { x: { type: "string" } },
        },
      })),
    })) as { planId: string };
    planId = created.planId;
  }, 600_000);
  afterAll(async () => {
    await metered?.close();
  });

  type Diff = {
    added: { stepOrder: number }[];
    removed: { stepOrder: number }[];
    moved: unknown[];
    instructions: unknown[];
    arguments: unknown[];
    omitted: number;
  };
  const newestDiff = async () => {
    const history = (await agent.ok("get_plan_history", { planId })) as {
      revisions: { diff: Diff }[];
    };
    return history.revisions[0]?.diff;
  };

  it("adds a step in front of 198 renumbered steps and removes it, reading under half the plan each", async () => {
    let stepId = "";
    const added = await bytesDuring(metered, async () => {
      const answer = (await agent.ok("modify_plan", {
        planId,
        action: "add_steps",
        insertAfterOrder: 0,
        steps: [{ stepType: "analyze", instructions: "Set the scene." }],
        modificationRationale: "A step first.",
      })) as { steps: { stepId: string; stepOrder: number }[] };
      stepId = answer.steps.find((step) => step.stepOrder === 1)?.stepId ?? "";
    });
    // Of 198 renumbered steps only the one with arguments shows, cut as
    // before (the start of JSON.stringify's text); the inputs are not shown.
    const shownArguments = (order: number) => ({
      text: JSON.stringify(boundArguments(order)).slice(0, DIFF_VALUE_CHARS),
      cut: true,
    });
    expect(await newestDiff()).toEqual({
      added: [
        expect.objectContaining({
          stepOrder: 1,
          instructions: { text: "Set the scene.", cut: false },
        }),
      ],
      removed: [],
      moved: [],
      instructions: [],
      arguments: [
        expect.objectContaining({
          stepOrder: 3,
          from: shownArguments(1),
          to: shownArguments(2),
        }),
      ],
      status: [],
      omitted: 0,
    });
    const removed = await bytesDuring(metered, () =>
      agent.ok("modify_plan", {
        planId,
        action: "remove_step",
        stepId,
        modificationRationale: "Not needed after all.",
      }),
    );
    expect(await newestDiff()).toMatchObject({
      added: [],
      removed: [{ stepOrder: 1 }],
      omitted: 0,
    });
    console.info(`${backend}: add_steps read ${added} bytes, remove_step ${removed}`);
    expect(added).toBeLessThan(CHANGE_BYTES);
    expect(removed).toBeLessThan(CHANGE_BYTES);
  }, 300_000);

  // A change that moves no step reads the step it names, not every step's
  // instructions and bindings: 4.0 MB on both databases before (each of 199
  // steps' 20,000 characters, before the plan's limit), when only the one
  // rewritten was needed.
  it("rewrites one step of 199 long steps, reading that step and the revision's few bytes", async () => {
    const [last] = await readRows<{ id: string }>(
      metered.db,
      sql`select id from plan_step where plan_id = ${planId}::uuid order by step_order desc limit 1`,
    );
    const read = await bytesDuring(metered, () =>
      agent.ok("modify_plan", {
        planId,
        action: "update_step_instructions",
        stepId: last?.id,
        instructions: "Rewritten, short.",
        modificationRationale: "Shorter.",
      }),
    );
    expect(await newestDiff()).toMatchObject({
      instructions: [
        expect.objectContaining({
          stepOrder: MAX_PLAN_STEPS - 1,
          to: { text: "Rewritten, short.", cut: false },
        }),
      ],
      omitted: 0,
    });
    console.info(`${backend}: update_step_instructions read ${read} bytes`);
    // The old instructions (for the audit's previousInstructions) and 128 KB
    // more; all the steps' instructions are 776,100 characters.
    expect(read).toBeLessThan(LONG_INSTRUCTIONS + 128 * 1024);
  }, 300_000);
});

/** A copy of the migrations up to and including `lastTag`. */
async function migrationsUpTo(lastTag: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "cairn-migrations-"));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as {
    entries: { tag: string }[];
  };
  const last = journal.entries.findIndex((entry) => entry.tag === lastTag);
  journal.entries = journal.entries.slice(0, last + 1);
  await writeFile(journalPath, JSON.stringify(journal));
  return folder;
}

/** An empty database migrated to 0025, before revisions kept definitions by digest, and its handle. */
async function databaseAt0025(backend: Backend) {
  const folder = await migrationsUpTo("0025_escalation_chains");
  try {
    if (backend === "pglite") {
      const handle = await openDatabase({ kind: "pglite" });
      await migratePglite(handle.db as unknown as ReturnType<typeof drizzlePglite>, {
        migrationsFolder: folder,
      });
      return handle;
    }
    const url = await createPostgresDatabase();
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: folder });
    } finally {
      await client.end();
    }
    return openDatabase({ kind: "postgres", url });
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe.each(BACKENDS)("migration 0026 on %s", (backend) => {
  it("turns revisions written whole into digests, keeping their history and reverts", async () => {
    const handle = await databaseAt0025(backend);
    try {
      const db = handle.db;
      const ctx = await tenantContext(db, "Before");
      const [plan] = await readRows<{ id: string }>(
        db,
        sql`insert into research_plan (tenant_id, name, research_question)
            values (${ctx.tenantId}, 'Old plan', 'q') returning id`,
      );
      const planId = String(plan?.id);
      const steps = await readRows<{ id: string }>(
        db,
        sql`insert into plan_step (tenant_id, plan_id, step_order, step_type, instructions, arguments)
            values (${ctx.tenantId}, ${planId}, 1, 'analyze', 'Compare by cost.', null),
                   (${ctx.tenantId}, ${planId}, 2, 'search', 'Find sources.', '{"q":"x"}')
            returning id`,
      );
      const [one, two] = steps.map((step) => step.id);
      // As 0022..0025 wrote them: every step whole in every revision.
      const whole = (instructions: string) => [
        {
          id: one,
          stepOrder: 1,
          stepType: "analyze",
          instructions,
          tool: null,
          arguments: null,
          inputs: null,
          outputSchema: null,
        },
        {
          id: two,
          stepOrder: 2,
          stepType: "search",
          instructions: "Find sources.",
          tool: null,
          arguments: { q: "x" },
          inputs: null,
          outputSchema: null,
        },
      ];
      const diff = (instructions: unknown[]) => ({
        added: [],
        removed: [],
        moved: [],
        instructions,
        arguments: [],
        status: [],
        omitted: 0,
      });
      const changed = [
        {
          stepId: one,
          stepOrder: 1,
          from: { text: "Compare.", cut: false },
          to: { text: "Compare by cost.", cut: false },
        },
      ];
      for (const [revision, cause, steps, shown] of [
        [1, "created", whole("Compare."), diff([])],
        [2, "update_step_instructions", whole("Compare by cost."), diff(changed)],
      ] as const) {
        await db.execute(sql`insert into plan_revision
          (tenant_id, plan_id, revision, cause, actor_type, actor_label, steps, diff)
          values (${ctx.tenantId}, ${planId}, ${revision}, ${cause}, 'system', 'Cairn',
                  ${JSON.stringify(steps)}::jsonb, ${JSON.stringify(shown)}::jsonb)`);
      }
      const agent = inProcessAgent(ctx);
      const history = await agent.ok("get_plan_history", { planId });

      await handle.migrate();

      expect(await agent.ok("get_plan_history", { planId })).toEqual(history);
      const kept = await readRows<{ revision: number; matches: boolean; entries: unknown }>(
        db,
        sql`select r.revision, r.steps as entries,
              (select bool_and(d.digest is not null) from jsonb_array_elements(r.steps) e
                 left join plan_step_definition d
                   on d.plan_id = r.plan_id and d.digest = e->>'digest') as matches
            from plan_revision r where r.plan_id = ${planId} order by r.revision`,
      );
      expect(kept.map((row) => row.matches)).toEqual([true, true]);
      const current = await readRows<{ id: string; digest: string }>(
        db,
        sql`select id, definition_digest as digest from plan_step where plan_id = ${planId} order by step_order`,
      );
      expect(kept[1]?.entries).toEqual(
        current.map((step, i) => ({ id: step.id, stepOrder: i + 1, digest: step.digest })),
      );
      const reverted = (await agent.ok("modify_plan", {
        planId,
        action: "revert_revision",
        revision: 1,
        modificationRationale: "Back to the first wording.",
      })) as { steps: { stepId: string }[] };
      expect(reverted.steps.map((step) => step.stepId)).toEqual([one, two]);
      const restored = await readRows<{ instructions: string }>(
        db,
        sql`select instructions from plan_step where plan_id = ${planId} order by step_order`,
      );
      expect(restored.map((step) => step.instructions)).toEqual(["Compare.", "Find sources."]);
      const after = (await agent.ok("get_plan_history", { planId })) as {
        revisions: { revision: number; diff: { instructions: unknown[]; arguments: unknown[] } }[];
      };
      expect(after.revisions[0]?.revision).toBe(3);
      expect(after.revisions[0]?.diff.instructions).toEqual([
        {
          stepId: one,
          stepOrder: 1,
          from: { text: "Compare by cost.", cut: false },
          to: { text: "Compare.", cut: false },
        },
      ]);
      expect(after.revisions[0]?.diff.arguments).toEqual([]);
    } finally {
      await handle.close();
    }
  }, 120_000);
});
