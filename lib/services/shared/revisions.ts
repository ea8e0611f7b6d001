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
import { and, asc, desc, eq } from "drizzle-orm";
import type { Transaction } from "../../db/client";
import { planRevisions, planSteps } from "../../db/schema";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import { diffRevision, type RevisionStep, revisionOf } from "../../plan-engine/revisions";
import type { ServiceContext } from "./context";

/** A plan's steps as a revision keeps them, in order. */
export async function readRevisionSteps(
  tx: Transaction,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
): Promise<RevisionStep[]> {
  return tx
    .select({
      id: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      instructions: planSteps.instructions,
      tool: planSteps.tool,
      arguments: planSteps.arguments,
      inputs: planSteps.inputs,
      outputSchema: planSteps.outputSchema,
    })
    .from(planSteps)
    .where(and(eq(planSteps.planId, planId), eq(planSteps.tenantId, ctx.tenantId)))
    .orderBy(asc(planSteps.stepOrder));
}

/** A revision's steps (what revert_revision restores); undefined when the plan has no such revision. */
export async function readRevision(
  tx: Transaction,
  ctx: Pick<ServiceContext, "tenantId">,
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
  return row?.steps;
}

/**
 * The next revision of the plan `entries` change, when they change its
 * definition; nothing otherwise. The caller holds the plan's row lock (every
 * writer of a definition does), which orders the revisions' numbers.
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
  const steps = await readRevisionSteps(tx, ctx, planId);
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
    diff: diffRevision(previous?.steps ?? null, steps, change.marked),
  });
}
