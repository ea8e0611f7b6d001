/** A plan's newest deliverable whole, for its download. */
import "server-only";
import { and, desc, eq } from "drizzle-orm";
import type { Executor } from "../../db/client";
import { researchOutputs } from "../../db/schema";
import type { ServiceContext } from "../shared/context";

/** A plan's newest deliverable (store_research_output), or null. */
export async function loadLatestDeliverable(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
) {
  const [output] = await db
    .select()
    .from(researchOutputs)
    .where(and(eq(researchOutputs.planId, planId), eq(researchOutputs.tenantId, ctx.tenantId)))
    .orderBy(desc(researchOutputs.createdAt), desc(researchOutputs.id))
    .limit(1);
  return output
    ? {
        outputId: output.id,
        outputMediaType: output.outputMediaType,
        content: output.content,
        formattingNotes: output.formattingNotes,
        citationCheck: output.citationCheck,
        createdAt: output.createdAt.toISOString(),
      }
    : null;
}
