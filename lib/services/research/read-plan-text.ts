/**
 * One value a context shortened, whole, a page of text at a time: a step's
 * result or report (or any value in its `shortened`), an artifact's content,
 * the deliverable. read_evidence answers it (docs/execution-loop.md, "Reading
 * a plan back"); a JSON value is read as its JSON text.
 */
import "server-only";
import { and, eq, sql } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { samePlan, sameTenant } from "../../db/same-tenant";
import { planSteps, researchArtifacts, researchOutputs } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { fitText, TEXT_PAGE_BYTES } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { artifactColumns, deliverableColumns, stepColumns } from "./context-pages";

/** read_evidence's fields for one value whole; its description says how to use them. */
export const planTextInput = {
  of: z.uuid("must be a stepId, artifactId or outputId (a UUID)").optional(),
  part: z.string().max(50).optional(),
  offset: z.number().int().min(0).optional(),
};

export const planTextOutput = z.object({
  text: z.string(),
  offset: z.number().int(),
  nextOffset: z.number().int().nullable(),
  chars: z.number().int(),
});

export type PlanText = z.infer<typeof planTextOutput>;

/** The largest offset substr is given: its start is an int, 2^31 - 1 at most. */
const MAX_OFFSET = 2 ** 31 - 2;

type Source = { table: PgTable; id: PgColumn; planId: PgColumn; tenantId: PgColumn };
const STEP: Source = {
  table: planSteps,
  id: planSteps.id,
  planId: planSteps.planId,
  tenantId: planSteps.tenantId,
};
const ARTIFACT: Source = {
  table: researchArtifacts,
  id: researchArtifacts.id,
  planId: researchArtifacts.planId,
  tenantId: researchArtifacts.tenantId,
};
const DELIVERABLE: Source = {
  table: researchOutputs,
  id: researchOutputs.id,
  planId: researchOutputs.planId,
  tenantId: researchOutputs.tenantId,
};

/** Where a part of that name may be: a step's, an artifact's, a deliverable's column. */
function columnsFor(part: string): [Source, PgColumn][] {
  const found: [Source, PgColumn][] = [];
  const has = <K extends string>(columns: Record<K, PgColumn>, name: string): name is K =>
    Object.hasOwn(columns, name);
  if (has(stepColumns, part)) found.push([STEP, stepColumns[part]]);
  if (has(artifactColumns, part)) found.push([ARTIFACT, artifactColumns[part]]);
  if (has(deliverableColumns, part)) found.push([DELIVERABLE, deliverableColumns[part]]);
  return found;
}

/**
 * A page of the value `part` of the step, artifact or deliverable `of` of the
 * plan: at most TEXT_PAGE_BYTES of JSON text from character `offset`, with the
 * offset to read on from (null at the end) and the value's length.
 */
export async function readPlanText(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
  { of, part, offset }: { of: string; part: string; offset: number },
): Promise<PlanText> {
  // No value is as long as PostgreSQL's int (text ends at 1 GB): an offset
  // beyond it reads nothing, and is refused below with the value's length.
  const from = Math.min(offset, MAX_OFFSET) + 1;
  for (const [source, column] of columnsFor(part)) {
    const text = column.dataType === "json" ? sql`${column}::text` : sql`${column}`;
    const [row] = await db
      .select({
        text: sql<string | null>`substr(${text}, ${from}::int, ${TEXT_PAGE_BYTES}::int)`,
        chars: sql<number | null>`char_length(${text})::int`,
      })
      .from(source.table)
      .where(
        and(
          eq(source.id, of),
          samePlan(source.planId, planId),
          sameTenant(source.tenantId, ctx.tenantId),
        ),
      );
    if (!row) continue;
    if (row.text === null || row.chars === null) {
      throw new AppError("NOT_FOUND", `part: ${of} has no ${part}.`);
    }
    if (offset > 0 && offset >= row.chars) {
      throw new AppError(
        "VALIDATION_ERROR",
        `offset: ${part} of ${of} has ${row.chars} characters; start below that (0 for the first page).`,
      );
    }
    const page = fitText(row.text, TEXT_PAGE_BYTES);
    const next = offset + page.chars;
    return {
      text: page.text,
      offset,
      nextOffset: next < row.chars ? next : null,
      chars: row.chars,
    };
  }
  throw new AppError(
    "NOT_FOUND",
    `of: the plan holds no step, artifact or deliverable ${of} with a ${part}; take an id and a name from a context's \`shortened\`.`,
  );
}
