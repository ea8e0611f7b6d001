/**
 * The skill-execution tracking record's state machine (docs/execution-flow.md,
 * phases 3 to 6). The router creates the record `started`; create_research_plan's
 * auto-link moves it to `executing`; the output skill closes it `completed`, and
 * any phase may close it `failed`. A record closed straight from `started` is the
 * prior-research check's "use existing" outcome (no plan was made). Kept as data,
 * like the plan and step tables in transitions.ts.
 */
import { AppError } from "./app-error";

export const SKILL_EXECUTION_STATUSES = ["started", "executing", "completed", "failed"] as const;
export type SkillExecutionStatus = (typeof SKILL_EXECUTION_STATUSES)[number];

export const VALID_SKILL_EXECUTION_TRANSITIONS: Readonly<
  Record<SkillExecutionStatus, readonly SkillExecutionStatus[]>
> = {
  started: ["executing", "completed", "failed"],
  executing: ["completed", "failed"],
  completed: [],
  failed: [],
};

export function isTerminalSkillExecutionStatus(status: SkillExecutionStatus): boolean {
  return VALID_SKILL_EXECUTION_TRANSITIONS[status].length === 0;
}

export type SkillExecutionUpdate = {
  from: SkillExecutionStatus;
  to: SkillExecutionStatus;
  closedReason?: string | undefined;
  errorMessage?: string | undefined;
};

/**
 * Decides an update of a tracking record. Keeping the status (`started` or
 * `executing`) is a metadata-only update, which is how the router stores the
 * prior-research check's exchange before a plan exists. Returns whether the
 * status changes; throws INVALID_TRANSITION for a move outside the table and
 * VALIDATION_ERROR when a closing move lacks the field that explains it.
 */
export function decideSkillExecutionUpdate(update: SkillExecutionUpdate): {
  statusChanges: boolean;
} {
  const { from, to } = update;
  if (isTerminalSkillExecutionStatus(from)) {
    throw new AppError(
      "INVALID_TRANSITION",
      `This skill execution is already ${from}, which is final; start a new one with log_skill_execution without an executionId.`,
      { entity: "skill_execution", from, to },
    );
  }
  if (from === to) return { statusChanges: false };
  if (!VALID_SKILL_EXECUTION_TRANSITIONS[from].includes(to)) {
    const allowed = VALID_SKILL_EXECUTION_TRANSITIONS[from].join(", ");
    throw new AppError(
      "INVALID_TRANSITION",
      `Cannot move a skill execution from ${from} to ${to}; from ${from} it may move to ${allowed} (or stay ${from} to add metadata).`,
      { entity: "skill_execution", from, to },
    );
  }
  if (to === "failed" && !update.errorMessage) {
    throw new AppError(
      "VALIDATION_ERROR",
      "errorMessage: required when status is failed; say what went wrong and where the research stopped.",
    );
  }
  if (from === "started" && to === "completed" && !update.closedReason) {
    // Completing without ever making a plan is the "use existing" outcome of
    // the prior-research check, and the record says why the session ended.
    throw new AppError(
      "VALIDATION_ERROR",
      'closedReason: required when a started execution completes without a plan, e.g. "user chose existing research".',
    );
  }
  return { statusChanges: true };
}

/**
 * A text field of a record's metadata, or null when it is absent or not a string:
 * the metadata is free-form JSON (only the fields it names are checked on write),
 * so its readers cannot assume a type.
 */
export function metadataText(
  metadata: Readonly<Record<string, unknown>> | null | undefined,
  key: string,
): string | null {
  const value = metadata?.[key];
  return typeof value === "string" ? value : null;
}
