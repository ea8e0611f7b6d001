/**
 * A plan's revisions, written (docs/history-and-forks.md): every writer of a
 * change's audit entries calls `recordRevision` in the change's transaction,
 * after the change's own writes, and the engine (`revisionOf`) says whether
 * the entries change the plan's definition. So no writer decides by itself
 * what counts as a revision, and none can forget one: `writeAuditLog` and the
 * loop's three fixed statements (a decided submit, a review decision, a run of
 * server steps) are every path to a plan's definition.
 */
import "server-only";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { planRevisions, planStepDefinitions, planSteps } from "../../db/schema";
import { arrayParam } from "../../db/statement";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import {
  definitionsShown,
  diffRevision,
  type RevisionEntry,
  type RevisionStep,
  revisionOf,
} from "../../plan-engine/revisions";
import type { ServiceContext } from "./context";

type PlanOf = Pick<ServiceContext, "tenantId">;

/** The plan's step definitions of these digests, by digest. */
async function readDefinitions(
  tx: Transaction,
  ctx: PlanOf,
  planId: string,
  digests: readonly string[],
): Promise<Map<string, Omit<RevisionStep, "id" | "stepOrder">>> {
  if (digests.length === 0) return new Map();
  const rows = await tx
    .select({ digest: planStepDefinitions.digest, definition: planStepDefinitions.definition })
    .from(planStepDefinitions)
    .where(
      and(
        eq(planStepDefinitions.planId, planId),
        eq(planStepDefinitions.tenantId, ctx.tenantId),
        sql`${planStepDefinitions.digest} = any(${arrayParam(digests)}::text[])`,
      ),
    );
  return new Map(rows.map((row) => [row.digest, row.definition]));
}

/** A revision's steps (what revert_revision restores); undefined when the plan has no such revision. */
export async function readRevision(
  tx: Transaction,
  ctx: PlanOf,
  planId: string,
  revision: number,
): Promise<RevisionStep[] | undefined> {
  const [row] = await tx
    .select({ steps: planRevisions.steps })
    .from(planRevisions)
    .where(
      and(
        eq(planRevisions.planId, planId),
        eq(planRevisions.tenantId, ctx.tenantId),
        eq(planRevisions.revision, revision),
      ),
    );
  if (!row) return undefined;
  const definitions = await readDefinitions(tx, ctx, planId, [
    ...new Set(row.steps.map((step) => step.digest)),
  ]);
  return row.steps.map(({ id, stepOrder, digest }) => {
    const definition = definitions.get(digest);
    if (!definition) throw new Error(`revision ${revision} names a definition the plan lacks`);
    return { id, stepOrder, ...definition };
  });
}

/**
 * The next revision of the plan `entries` change, when they change its
 * definition; nothing otherwise. The caller holds the plan's row lock (every
 * writer of a definition does), which orders the revisions' numbers.
 *
 * It reads the steps' ids, places and digests (kept by the
 * `plan_step_definition_digest` trigger), writes only the definitions the
 * previous revision did not have, and reads only those the diff shows: a
 * change's cost grows with what it changed, not with how long the steps are.
 */
export async function recordRevision(
  tx: Transaction,
  ctx: ServiceContext,
  entries: readonly AuditEntry[],
): Promise<void> {
  const change = revisionOf(entries);
  if (!change) return;
  const { planId } = change;
  const [previous] = await tx
    .select({ revision: planRevisions.revision, steps: planRevisions.steps })
    .from(planRevisions)
    .where(and(eq(planRevisions.planId, planId), eq(planRevisions.tenantId, ctx.tenantId)))
    .orderBy(desc(planRevisions.revision))
    .limit(1);
  const steps: RevisionEntry[] = await tx
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      digest: planSteps.definitionDigest,
    })
    .from(planSteps)
    .where(and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId)))
    .orderBy(asc(planSteps.stepOrder));
  const before = previous?.steps ?? null;
  const known = new Set(before?.map((step) => step.digest));
  const fresh = steps.filter((step) => !known.has(step.digest)).map((step) => step.id);
  if (fresh.length > 0) {
    // An older revision may have had it (a revert): kept once all the same.
    await tx.execute(sql`
      insert into plan_step_definition (tenant_id, plan_id, digest, definition)
      select distinct on (definition_digest) tenant_id, plan_id, definition_digest,
        cairn_step_definition(step_type::text, instructions, tool, arguments, inputs, output_schema)
      from plan_step
      where plan_id = ${planId} and tenant_id = ${ctx.tenantId}
        and id = any(${arrayParam(fresh)}::uuid[])
      on conflict (plan_id, digest) do nothing`);
  }
  const definitions = await readDefinitions(tx, ctx, planId, definitionsShown(before, steps));
  await tx.insert(planRevisions).values({
    tenantId: ctx.tenantId,
    planId,
    revision: (previous?.revision ?? 0) + 1,
    cause: change.cause,
    rationale: change.rationale,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    actorLabel: ctx.actor.label,
    steps,
    diff: diffRevision(before, steps, definitions, change.marked),
  });
}
