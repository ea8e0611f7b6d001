/**
 * A plan's revisions, written (docs/history-and-forks.md): every writer of a
 * change's audit entries calls `recordRevision` in the change's transaction,
 * after the change's own writes, and the engine (`revisionOf`) says whether
 * the entries change the plan's definition. So no writer decides by itself
 * what counts as a revision, and none can forget one: `writeAuditLog`, the
 * loop's three fixed statements (a decided submit, a review decision, a run of
 * server steps) are every path to a change of a plan's definition.
 * create_research_plan's statement (`insertPlan`) writes a new plan's first
 * revision itself, as `firstRevision` makes it from the same engine.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { planRevisions, planStepDefinitions } from "../../db/schema";
import { arrayParam } from "../../db/statement";
import type { AuditEntry } from "../../plan-engine/audit-entries";
import {
  type ComparedDefinition,
  DIFF_VALUE_CHARS,
  type DiffValue,
  definitionsCompared,
  definitionsShown,
  diffRevision,
  diffValue,
  type RevisionDiff,
  type RevisionStep,
  revisionOf,
  type ShownDefinition,
} from "../../plan-engine/revisions";
import type { StepType } from "../../plan-engine/states";
import type { ServiceContext } from "./context";

type PlanOf = Pick<ServiceContext, "tenantId">;

const revisionEntry = z.object({ id: z.string(), stepOrder: z.number(), digest: z.string() });
/** `recordRevision`'s read: the plan's newest revision (none for a plan just made) and its steps now. */
const revisionRead = z.object({
  previousRevision: z.number().nullable(),
  previousSteps: z.array(revisionEntry).nullable(),
  steps: z.array(revisionEntry),
});

/** The plan's step definitions of these digests, whole, by digest (a revert's). */
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
    .where(definitionsOf(ctx, planId, digests));
  return new Map(rows.map((row) => [row.digest, row.definition]));
}

/** Where the definitions of these digests of the plan are. */
const definitionsOf = (ctx: PlanOf, planId: string, digests: readonly string[]) =>
  and(
    eq(planStepDefinitions.planId, planId),
    eq(planStepDefinitions.tenantId, ctx.tenantId),
    sql`${planStepDefinitions.digest} = any(${arrayParam(digests)}::text[])`,
  );

/**
 * A fingerprint of the instructions and of the arguments of the plan's
 * definitions of these digests, hashed in the database so a definition never
 * leaves it to be compared. jsonb's text is canonical, so equal arguments
 * have equal fingerprints.
 */
async function readFingerprints(
  tx: Transaction,
  ctx: PlanOf,
  planId: string,
  digests: readonly string[],
): Promise<Map<string, ComparedDefinition>> {
  if (digests.length === 0) return new Map();
  const rows = await tx
    .select({
      digest: planStepDefinitions.digest,
      instructions: sql<string>`md5(${planStepDefinitions.definition}->>'instructions')`,
      arguments: sql<string>`md5((${planStepDefinitions.definition}->'arguments')::text)`,
    })
    .from(planStepDefinitions)
    .where(definitionsOf(ctx, planId, digests));
  return new Map(rows.map(({ digest, ...fingerprint }) => [digest, fingerprint] as const));
}

/**
 * How much of the arguments' JSON text the database sends for a diff: twice
 * what it shows, since jsonb writes a space after each `,` and `:` that
 * JSON.stringify does not, and each of those comes with at least two
 * characters more (so at most a third of the text is such spaces).
 */
const ARGUMENTS_READ_CHARS = DIFF_VALUE_CHARS * 2;

/**
 * Arguments as a diff shows them (`diffValue`: the start of JSON.stringify's
 * text) from the start of jsonb's text: parsed when it is whole, so it reads
 * exactly as before; when cut, jsonb's spaces between tokens dropped (one
 * pass; a string's own spaces kept). A number written with an exponent
 * (1e+21) would show as jsonb writes it, in full digits.
 */
function argumentsShown(start: string | null, whole: boolean): DiffValue {
  if (start === null) return null;
  if (whole) return diffValue(JSON.parse(start));
  let compact = "";
  let inString = false;
  let escaped = false;
  for (const character of start) {
    if (inString) {
      if (escaped) escaped = false;
      else if (character === "\\") escaped = true;
      else if (character === '"') inString = false;
    } else if (character === '"') inString = true;
    else if (character === " ") continue;
    compact += character;
  }
  return { text: diffValue(compact)?.text ?? "", cut: true };
}

/**
 * What a diff shows of the plan's definitions of these digests: the step
 * type and the start of the instructions and of the arguments, cut in the
 * database (`definitionsShown` names at most a few dozen).
 */
async function readShown(
  tx: Transaction,
  ctx: PlanOf,
  planId: string,
  digests: readonly string[],
): Promise<Map<string, ShownDefinition>> {
  if (digests.length === 0) return new Map();
  const definition = planStepDefinitions.definition;
  const shownChars = sql.raw(String(DIFF_VALUE_CHARS));
  const readChars = sql.raw(String(ARGUMENTS_READ_CHARS));
  const args = sql`nullif(${definition}->'arguments', 'null'::jsonb)::text`;
  const rows = await tx
    .select({
      digest: planStepDefinitions.digest,
      stepType: sql<StepType>`${definition}->>'stepType'`,
      instructions: sql<string>`left(${definition}->>'instructions', ${shownChars})`,
      instructionsCut: sql<boolean>`char_length(${definition}->>'instructions') > ${shownChars}`,
      arguments: sql<string | null>`left(${args}, ${readChars})`,
      argumentsWhole: sql<boolean>`coalesce(char_length(${args}) <= ${readChars}, true)`,
    })
    .from(planStepDefinitions)
    .where(definitionsOf(ctx, planId, digests));
  return new Map(
    rows.map((row) => [
      row.digest,
      {
        stepType: row.stepType,
        instructions: { text: row.instructions, cut: row.instructionsCut },
        arguments: argumentsShown(row.arguments, row.argumentsWhole),
      },
    ]),
  );
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
 * previous revision did not have, reads a fingerprint of each changed step's
 * old and new definitions, and of them a cut of only the few the diff shows:
 * a change's cost grows with how many steps it changed, by a few bytes each,
 * not with how long they are.
 */
export async function recordRevision(
  tx: Transaction,
  ctx: ServiceContext,
  entries: readonly AuditEntry[],
): Promise<void> {
  const change = revisionOf(entries);
  if (!change) return;
  const { planId } = change;
  // The previous revision and the steps now, and the definitions the previous
  // revision did not have written, in one round trip. An older revision may
  // have had one (a revert): kept once all the same.
  const [read] = await selectRows(
    tx,
    revisionRead,
    sql`
    with previous as (
      select revision, steps from plan_revision
      where plan_id = ${planId} and tenant_id = ${ctx.tenantId}
      order by revision desc limit 1
    ), fresh as (
      insert into plan_step_definition (tenant_id, plan_id, digest, definition)
      select distinct on (definition_digest) tenant_id, plan_id, definition_digest,
        cairn_step_definition(step_type::text, instructions, tool, arguments, inputs, output_schema)
      from plan_step
      where plan_id = ${planId} and tenant_id = ${ctx.tenantId}
        and not exists (
          select 1 from previous, jsonb_array_elements(previous.steps) as entry
          where entry->>'digest' = plan_step.definition_digest)
      on conflict (plan_id, digest) do nothing
    )
    select previous.revision as "previousRevision", previous.steps as "previousSteps",
      coalesce((
        select json_agg(json_build_object(
          'id', id, 'stepOrder', step_order, 'digest', definition_digest) order by step_order)
        from plan_step where plan_id = ${planId} and tenant_id = ${ctx.tenantId}
      ), '[]'::json) as steps
    from (select 1) as one left join previous on true`,
  );
  if (!read) throw new Error("the revision read answered no row");
  const { steps, previousSteps: before } = read;
  const compared = await readFingerprints(tx, ctx, planId, definitionsCompared(before, steps));
  const shown = await readShown(tx, ctx, planId, definitionsShown(before, steps, compared));
  await tx.insert(planRevisions).values({
    tenantId: ctx.tenantId,
    planId,
    revision: (read.previousRevision ?? 0) + 1,
    cause: change.cause,
    rationale: change.rationale,
    actorType: ctx.actor.type,
    actorId: ctx.actor.id,
    actorLabel: ctx.actor.label,
    steps,
    diff: diffRevision(before, steps, compared, shown, change.marked),
  });
}

/** The columns of a plan's first revision but its steps, whose digests the database computes. */
export type FirstRevision = {
  cause: string;
  rationale: string | null;
  diff: RevisionDiff;
};

/**
 * A new plan's first revision, known before its steps are stored, so the
 * statement that stores them writes it too (create_research_plan's
 * `insertPlan`, with the steps' ids and digests). The engine decides it from
 * the change's audit entries as for every other change; every step is added,
 * and an added step's entry shows its type and the start of its instructions
 * (`diffValue`), the same text `readShown` would read back of what was just
 * stored. Each step's id stands in for its digest: the diff's walk only looks
 * definitions up by it, and a new plan's steps compare with nothing.
 */
export function firstRevision(
  entries: readonly AuditEntry[],
  steps: readonly { id: string; stepOrder: number; stepType: StepType; instructions: string }[],
): FirstRevision | null {
  const change = revisionOf(entries);
  if (!change) return null;
  const shown = new Map<string, ShownDefinition>(
    steps.map((step) => [
      step.id,
      // An added step's entry shows no arguments.
      { stepType: step.stepType, instructions: diffValue(step.instructions), arguments: null },
    ]),
  );
  const after = steps.map(({ id, stepOrder }) => ({ id, stepOrder, digest: id }));
  return {
    cause: change.cause,
    rationale: change.rationale,
    diff: diffRevision(null, after, new Map(), shown, change.marked),
  };
}
