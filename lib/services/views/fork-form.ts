/** The "Fork from here" form's read (docs/history-and-forks.md). */
import "server-only";
import { and, asc, eq, gte } from "drizzle-orm";
import { z } from "zod";
import { samePlan, sameTenant } from "../../db/same-tenant";
import { planSteps } from "../../db/schema";
import { undefinedIfNotFound } from "../../plan-engine/app-error";
import { fitting } from "../shared/bounded";
import type { ServiceContext } from "../shared/context";
import { editableJsonText, MAX_STEP_IO_BYTES } from "../shared/fields";
import { getPlan } from "../shared/plan-access";

/**
 * How many steps from the fork point the fork form lets a person edit, and
 * the JSON text of their instructions and arguments it holds (at least the
 * first step's, whole); later ones are forked as they are.
 */
export const FORK_FORM_STEPS = 20;
export const FORK_FORM_BYTES = 64 * 1024;

/**
 * The "Fork from here" form (docs/history-and-forks.md): the plan's name, the
 * step the fork starts at and the next FORK_FORM_STEPS steps with their
 * instructions and a server-run step's arguments, as the person may edit
 * them. Undefined for a plan or step not in the tenant.
 */
export async function getForkForm(ctx: ServiceContext, planId: string, stepId: string) {
  if (!z.uuid().safeParse(planId).success || !z.uuid().safeParse(stepId).success) {
    return undefined;
  }
  const plan = await undefinedIfNotFound(getPlan(ctx.db, ctx, planId));
  if (!plan) return undefined;
  const [from] = await ctx.db
    .select({ stepOrder: planSteps.stepOrder })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.id, stepId),
        samePlan(planSteps.planId, plan.id),
        sameTenant(planSteps.tenantId, ctx.tenantId),
      ),
    );
  if (!from) return undefined;
  const steps = await ctx.db
    .select({
      stepId: planSteps.id,
      stepOrder: planSteps.stepOrder,
      stepType: planSteps.stepType,
      instructions: planSteps.instructions,
      tool: planSteps.tool,
      arguments: planSteps.arguments,
    })
    .from(planSteps)
    .where(
      and(
        eq(planSteps.planId, plan.id),
        eq(planSteps.tenantId, ctx.tenantId),
        gte(planSteps.stepOrder, from.stepOrder),
      ),
    )
    .orderBy(asc(planSteps.stepOrder))
    .limit(FORK_FORM_STEPS + 1);
  const shown = steps.slice(0, FORK_FORM_STEPS).map(({ arguments: args, ...step }) => ({
    ...step,
    argumentsText: step.tool ? editableJsonText(args, MAX_STEP_IO_BYTES) : null,
  }));
  // The page carries each value twice (the form, and its props for the browser).
  const fit = fitting(shown, FORK_FORM_BYTES);
  return {
    planId: plan.id,
    name: plan.name,
    fromStepId: stepId,
    fromStepOrder: from.stepOrder,
    steps: shown.slice(0, fit),
    moreSteps: steps.length > fit,
  };
}
