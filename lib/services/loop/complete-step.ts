/**
 * submit_step_result's write once the engine decided on a locked snapshot
 * (`decideSubmit`): the step's result and the completion's effects, with their
 * audit rows, as one fixed statement.
 */
import "server-only";
import { z } from "zod";
import type { Transaction } from "../../db/client";
import { jsonParam, run, statement } from "../../db/statement";
import type { SubmitDecision } from "../../plan-engine/submit";
import type { ServiceContext } from "../shared/context";
import { recordRevision } from "../shared/revisions";
import { completionAuditInsert, completionEffectsCtes, effectsParams } from "./completion-effects";

const completeStep = statement(
  "write a decided step result",
  `with ${completionEffectsCtes}, step_update as (
    update plan_step set status = $12::step_status, result = $13::jsonb,
      result_summary = $14::text, confidence = $15::float8,
      step_execution_report = $16::jsonb, output_formatting_notes = $17::text,
      started_at = $18::timestamptz, completed_at = $3::timestamptz,
      lease_expires_at = null, attempt = greatest(attempt, 1), updated_at = $3::timestamptz
    where id = $2::uuid
  ) ${completionAuditInsert}`,
  z.unknown(),
);

export type DecidedSubmit = {
  planId: string;
  step: {
    id: string;
    result: Record<string, unknown>;
    resultSummary: string | null;
    confidence: number | null;
    stepExecutionReport: unknown;
    outputFormattingNotes: string | null;
    startedAt: string;
  };
  decision: SubmitDecision;
  now: string;
};

export async function writeDecidedSubmit(
  tx: Transaction,
  ctx: ServiceContext,
  { planId, step, decision, now }: DecidedSubmit,
): Promise<void> {
  await run(tx, completeStep, [
    ...effectsParams(ctx, planId, step.id, decision, now),
    decision.step.status,
    jsonParam(step.result),
    step.resultSummary,
    step.confidence,
    jsonParam(step.stepExecutionReport),
    step.outputFormattingNotes,
    step.startedAt,
  ]);
  await recordRevision(tx, ctx, decision.audit);
}
