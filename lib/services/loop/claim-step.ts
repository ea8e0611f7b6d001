/**
 * get_next_step's claim inside its transaction, on a plan the caller has
 * locked (after it started or resumed the plan, or ran the server steps next in
 * line): the same CTEs as `claim-next-step.ts`, for a plan whose status before
 * the claim the caller passes, since it may not be `executing` yet.
 */
import "server-only";
import type { Transaction } from "../../db/client";
import { run, statement } from "../../db/statement";
import type { PlanStatus } from "../../plan-engine/states";
import type { ServiceContext } from "../shared/context";
import {
  type ClaimedStep,
  claimCtes,
  claimedColumns,
  claimedStepRow,
  claimParams,
} from "./claim-next-step";

const claimLocked = statement(
  "claim the next step of a locked plan",
  `with ${claimCtes("$1::uuid", "$8::text")}
  select ${claimedColumns("$1::uuid")}
  from (select 1) as one left join claimed on true`,
  claimedStepRow,
);

export async function claimStep(
  tx: Transaction,
  ctx: ServiceContext,
  planId: string,
  planStatusBefore: PlanStatus,
  now: string,
): Promise<ClaimedStep | undefined> {
  const [row] = await run(tx, claimLocked, [...claimParams(ctx, planId, now), planStatusBefore]);
  return row;
}
