/**
 * What a modify_plan change is: its actions, the change asked for, the steps
 * as the service read them, and the writes the engine decides, with the
 * helpers the actions' deciders share.
 */
import { AppError } from "./app-error";
import type { AuditEntry } from "./audit-entries";
import type { AwaitingSteps } from "./plan-snapshot";
import type { PlanStatus, RevisionStep, StepStatus, StepType } from "./states";

export const MODIFY_ACTIONS = [
  "add_steps",
  "remove_step",
  "reorder_steps",
  "update_step_instructions",
  "fail_step",
  "retry_step",
  "decline_add_steps",
  "revert_revision",
] as const;
export type ModifyAction = (typeof MODIFY_ACTIONS)[number];

export type ModifyStep = {
  id: string;
  stepOrder: number;
  stepType: StepType;
  status: StepStatus;
  /**
   * Read only where the change needs them: the step an action names, and
   * every step for a revert (which compares and restores them); null for the
   * others, so no rule can read instructions it was not given.
   */
  instructions: string | null;
  failureReason: string | null;
  arguments: Record<string, unknown> | null;
  inputs: Record<string, unknown> | null;
};

export type NewStep = { id: string; stepType: StepType; instructions: string };

/** revert_revision: the revision asked for and its steps as the service read them (undefined: no such revision). */
export type RevertTarget = { revision: number; steps: readonly RevisionStep[] | undefined };

export type ModifyEvent = {
  action: ModifyAction;
  modificationRationale: string;
  /** add_steps: the new steps, with ids the caller generated for them. */
  steps?: readonly NewStep[] | undefined;
  insertAfterOrder?: number | undefined;
  stepId?: string | undefined;
  stepIds?: readonly string[] | undefined;
  instructions?: string | undefined;
  reason?: string | undefined;
  revert?: RevertTarget | undefined;
};

/** The writes, in order; `setOrders` gives every remaining step its final order. */
export type ModifyOp =
  | { op: "insert"; steps: { id: string; stepOrder: number }[] }
  | { op: "delete"; stepId: string }
  | { op: "setOrders"; orders: { id: string; stepOrder: number }[] }
  | { op: "setInstructions"; stepId: string; instructions: string }
  | { op: "fail"; stepId: string; reason: string }
  | { op: "retry"; stepId: string }
  | { op: "setBindings"; stepId: string; arguments?: unknown; inputs?: unknown };

export type ModifyDecision = {
  ops: ModifyOp[];
  audit: AuditEntry[];
  planStatus: PlanStatus;
  awaitingSteps: AwaitingSteps | null;
  /** The steps as they will be, in order. */
  steps: { id: string; stepOrder: number; stepType: StepType; status: StepStatus }[];
  /** Set when this change ended the plan: what happened and how to go on. */
  planEnded?: string;
};

export function missingFieldError(action: string, field: string, what: string): AppError {
  return new AppError("VALIDATION_ERROR", `${action} needs ${field}: ${what}.`, { field });
}

export function isNew(step: ModifyStep, event: ModifyEvent): boolean {
  return event.steps?.some((s) => s.id === step.id) ?? false;
}

export function ordersOf(steps: readonly { id: string; stepOrder: number }[]) {
  return steps.map(({ id, stepOrder }) => ({ id, stepOrder }));
}
