/**
 * A plan's fork links: the plan it was forked from and its newest forks, in
 * get_plan_status, get_research_context and the plan page. Read as columns of
 * the plan's row (`forkLinksColumns`), so get_plan_status reads them in its own
 * statement and the others in one round trip, where two queries took them
 * (three for a fork).
 */
import "server-only";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { run, statement } from "../../db/statement";
import { planOfTenant } from "../loop/plan-lock";
import type { ServiceContext } from "../shared/context";
import { planStatus } from "../shared/output-fields";

/** How many of a plan's forks its answers name, newest first: a bound on the answer, however often it was forked. */
export const FORK_LINKS = 20;

export const forkLinksOutput = z.object({
  forkedFrom: z
    .object({ planId: z.string(), stepId: z.string(), name: z.string().nullable() })
    .nullable(),
  forks: z.array(z.object({ planId: z.string(), name: z.string(), status: planStatus })),
});

export type ForkLinks = z.infer<typeof forkLinksOutput>;

/**
 * The columns `forkedFrom` and `forks` over the plan row `p`, for the tenant
 * `tenant` (SQL): the source's name found by its primary key (its tenant tested
 * as `sameTenant` does, lib/db/same-tenant.ts), and the forks through
 * `research_plan_forked_from_idx`, newest first, at most `FORK_LINKS`.
 */
export function forkLinksColumns(tenant: string): string {
  return `case when p.forked_from_plan_id is not null and p.forked_from_step_id is not null
      then json_build_object('planId', p.forked_from_plan_id, 'stepId', p.forked_from_step_id,
        'name', (select f.name from research_plan f
          where f.id = p.forked_from_plan_id and f.tenant_id is not distinct from ${tenant}))
    end as "forkedFrom",
    coalesce((select json_agg(json_build_object('planId', c.id, 'name', c.name,
        'status', c.status) order by c.created_at desc, c.id)
      from (select id, name, status, created_at from research_plan
        where forked_from_plan_id = p.id and tenant_id = ${tenant}
        order by created_at desc, id limit ${FORK_LINKS}) c), '[]'::json) as forks`;
}

const readLinks = statement(
  "read a plan's fork links",
  `select ${forkLinksColumns("$2::uuid")} from research_plan p where ${planOfTenant("p")}`,
  forkLinksOutput,
);

/** A plan's source and its newest forks (none for a plan the tenant does not have). */
export async function readForkLinks(
  db: Executor,
  ctx: Pick<ServiceContext, "tenantId">,
  planId: string,
): Promise<ForkLinks> {
  const [row] = await run(db, readLinks, [planId, ctx.tenantId]);
  return row ?? { forkedFrom: null, forks: [] };
}
