/**
 * The one total of a plan's step definitions: every step's instructions,
 * arguments, inputs and outputSchema together. Bindings name steps by order,
 * so a change that moves steps (add_steps, remove_step, reorder_steps)
 * rewrites the arguments and inputs of every step bound to a moved one, a
 * revert reads the definitions it restores, and a revision copies each
 * changed definition: all of that grows with this total, so it is bounded
 * (docs/execution-loop.md, "Size limits"; docs/security.md).
 */
import "server-only";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { selectRows } from "../../db/rows";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "./context";

/** The most text a plan's step definitions hold together, counted as `planDefinitionBytes` counts. */
export const MAX_PLAN_DEFINITION_BYTES = 1024 * 1024;

/**
 * One `plan_step` row's share of `planDefinitionBytes`, over its own columns
 * (SQL text): create_research_plan's statement sums it over its input's
 * columns of the same names and types before it writes a step.
 */
export const STEP_DEFINITION_BYTES = `(octet_length(to_jsonb(instructions)::text)
  + coalesce(octet_length(arguments::text), 0) + coalesce(octet_length(inputs::text), 0)
  + coalesce(octet_length(output_schema::text), 0))`;

/**
 * A plan's definitions in UTF-8 bytes of JSON text, as answers carry them,
 * summed in the database (at most the plan's 200 steps): instructions as a
 * JSON string (a control character is six bytes there, so a text of them
 * cannot answer six times what it counts), the JSON values as PostgreSQL
 * writes their text.
 */
export async function planDefinitionBytes(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
): Promise<number> {
  const [held] = await selectRows(
    tx,
    z.object({ bytes: z.coerce.number() }),
    sql`
    select coalesce(sum(${sql.raw(STEP_DEFINITION_BYTES)}), 0) as bytes
    from plan_step where tenant_id = ${ctx.tenantId}::uuid and plan_id = ${planId}::uuid`,
  );
  return held?.bytes ?? 0;
}

const DEFAULT_REFUSAL = {
  field: "steps",
  advice:
    "keep instructions to what the step needs, and store long material with store_research (bind or cite its artifactId)",
};

/**
 * Refuses, inside the change's transaction (so nothing of it is kept), a
 * change that left the plan's definitions over MAX_PLAN_DEFINITION_BYTES and
 * larger than the `held` bytes it started from: a plan already over the
 * limit (stored before it existed) may still shrink or move its steps. Every
 * writer of a definition that can grow it calls this: modify_plan,
 * fork_plan, a person's `modify` feedback, which the step's instructions
 * keep, and create_research_plan, whose statement sums its input and writes
 * nothing over the limit (`refuseDefinitionTotal`).
 */
export async function checkDefinitionTotal(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  held: number,
  refused: { field: string; advice: string } = DEFAULT_REFUSAL,
): Promise<void> {
  refuseDefinitionTotal(await planDefinitionBytes(tx, ctx, planId), held, refused);
}

/** `checkDefinitionTotal`'s rule, for a writer that knows the plan's new total. */
export function refuseDefinitionTotal(
  total: number,
  held: number,
  refused: { field: string; advice: string } = DEFAULT_REFUSAL,
): void {
  if (total <= MAX_PLAN_DEFINITION_BYTES || total <= held) return;
  throw new AppError(
    "VALIDATION_ERROR",
    `${refused.field}: the plan's steps would hold ${total.toLocaleString("en-US")} bytes of instructions, arguments, inputs and output schemas together, over the limit of ${MAX_PLAN_DEFINITION_BYTES.toLocaleString("en-US")} bytes (1 MB) a plan; ${refused.advice}.`,
    { field: refused.field, bytes: total, limit: MAX_PLAN_DEFINITION_BYTES },
  );
}
