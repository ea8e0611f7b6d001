/**
 * The vocabularies of the plan engine, as `as const` tuples so that one source
 * feeds the TypeScript types here, zod enums at the edges and pg enums in the
 * schema. State meanings are described in docs/state-machines.md;
 * audit events and review decisions in docs/execution-loop.md.
 */

export const PLAN_STATUSES = [
  "planning",
  "executing",
  "awaiting_review",
  "stalled",
  "completed",
  "failed",
  "cancelled",
] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];

export const STEP_STATUSES = [
  "pending",
  "in_progress",
  "awaiting_input",
  "completed",
  "skipped",
  "failed",
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const STEP_TYPES = [
  "search",
  "extract",
  "analyze",
  "critique",
  "synthesize",
  "checkpoint",
  "custom",
] as const;
export type StepType = (typeof STEP_TYPES)[number];

/**
 * `failed` counts as terminal although it allows a retry (`failed -> pending`):
 * docs/state-machines.md, treats a
 * failed step like a skipped one when deciding whether the plan is done.
 */
export const TERMINAL_STEP_STATUSES = ["completed", "skipped", "failed"] as const;
export type TerminalStepStatus = (typeof TERMINAL_STEP_STATUSES)[number];

/**
 * The steps an agent has yet to finish: pending, or handed out. With
 * `awaiting_input` and the terminal ones they are every status. The loop's
 * statements find them through one index of their own (`plan_step_open_idx`,
 * whose predicate names these statuses), so a claim or a submit late in a long
 * plan reads as few of its steps as one early on, not every step before it.
 */
export const OPEN_STEP_STATUSES = ["pending", "in_progress"] as const;

/**
 * Ended plans: no step is handed out or accepted. `completed` alone can be
 * re-opened, by retrying a step that failed (docs/state-machines.md).
 */
export const TERMINAL_PLAN_STATUSES = ["completed", "failed", "cancelled"] as const;
export type TerminalPlanStatus = (typeof TERMINAL_PLAN_STATUSES)[number];

/** The eight event types of the audit trail (docs/execution-loop.md). */
export const AUDIT_EVENT_TYPES = [
  "step_started",
  "step_completed",
  "step_failed",
  "plan_modified",
  "user_reviewed",
  "session_resumed",
  "skill_started",
  "skill_completed",
  /** Sources and claims recorded for a step: with its result, or added after it completed. */
  "evidence_recorded",
  /** A deliverable stored for the plan (store_research_output), with its content's digest. */
  "output_stored",
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** What a person may answer at a checkpoint (docs/execution-loop.md). */
export const REVIEW_DECISIONS = ["approve", "reject", "modify", "skip"] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];

/**
 * Who a team lets decide its checkpoints (docs/reviews.md): only people signed
 * in to Cairn, or also the agents that relay a person's answer from their chat
 * (the reference design's flow, where a new team starts).
 */
export const DECISION_POLICIES = ["people_only", "people_and_agents"] as const;
export type DecisionPolicy = (typeof DECISION_POLICIES)[number];
export const DEFAULT_DECISION_POLICY: DecisionPolicy = "people_and_agents";

/**
 * How a decision reached Cairn: a person in the web UI, a person answering in
 * their own MCP client (a form the client showed them), an agent (API key or
 * connected app) relaying what its user said, or Cairn itself at a deadline.
 */
export const DECISION_CHANNELS = ["web", "client", "relayed", "deadline"] as const;
export type DecisionChannel = (typeof DECISION_CHANNELS)[number];

// Guards for values read from the database or the wire, where the type system
// cannot vouch for the string. `includes` on a widened tuple avoids a cast per call.
function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === "string" && (values as readonly string[]).includes(value);
}

export function isDecisionChannel(value: unknown): value is DecisionChannel {
  return isOneOf(DECISION_CHANNELS, value);
}

export function isDecisionPolicy(value: unknown): value is DecisionPolicy {
  return isOneOf(DECISION_POLICIES, value);
}

export function isPlanStatus(value: unknown): value is PlanStatus {
  return isOneOf(PLAN_STATUSES, value);
}

export function isStepStatus(value: unknown): value is StepStatus {
  return isOneOf(STEP_STATUSES, value);
}

export function isStepType(value: unknown): value is StepType {
  return isOneOf(STEP_TYPES, value);
}

export function isReviewDecision(value: unknown): value is ReviewDecision {
  return isOneOf(REVIEW_DECISIONS, value);
}

export function isAuditEventType(value: unknown): value is AuditEventType {
  return isOneOf(AUDIT_EVENT_TYPES, value);
}

/**
 * The most distinct approvals a review may need (docs/reviews.md, "Quorum"):
 * a team is people, and a checkpoint nobody can gather enough approvals for
 * would stand for good.
 */
export const MAX_APPROVALS_REQUIRED = 10;

/**
 * A step's definition as a revision keeps it: what a revert restores. Here,
 * not in revisions.ts, because modify.ts (the revert) and revisions.ts both need it.
 */
export type RevisionStep = {
  id: string;
  stepOrder: number;
  stepType: StepType;
  instructions: string;
  tool: string | null;
  arguments: Record<string, unknown> | null;
  inputs: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
};

/**
 * A step as a revision lists it: its place and the digest of its definition
 * (kept once per plan and digest, `plan_step_definition`), so a revision
 * costs a few bytes per step however long the steps are.
 */
export type RevisionEntry = { id: string; stepOrder: number; digest: string };
