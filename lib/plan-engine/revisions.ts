/**
 * A plan's revisions (docs/history-and-forks.md): which changes make one
 * (`revisionOf`, read from the audit entries the change writes, so every
 * writer of a change makes its revision the same way), and the diff between
 * two revisions' steps (`diffRevision`), compared by their definitions'
 * digests, linear in the lists' lengths and bounded in its own; of the
 * definitions it reads only those it shows (`definitionsShown`).
 */
import type { AuditEntry } from "./audit-entries";
import { MODIFY_ACTIONS } from "./modify-change";
import type { RevisionEntry, RevisionStep, ShownDefinition, StepStatus, StepType } from "./states";

export type { RevisionEntry, RevisionStep, ShownDefinition };

/** A value in a diff: its first characters, and whether it was cut. */
export type DiffValue = { text: string; cut: boolean } | null;

export type RevisionDiff = {
  added: { stepId: string; stepOrder: number; stepType: StepType; instructions: DiffValue }[];
  removed: { stepId: string; stepOrder: number; instructions: DiffValue }[];
  /** Steps whose place among the steps kept changed (not those that only shifted around an added or removed one). */
  moved: { stepId: string; from: number; to: number }[];
  instructions: { stepId: string; stepOrder: number; from: DiffValue; to: DiffValue }[];
  arguments: { stepId: string; stepOrder: number; from: DiffValue; to: DiffValue }[];
  /** Steps the change skipped, failed or put back to pending. */
  status: { stepId: string; stepOrder: number; to: StepStatus }[];
  /** Entries left out beyond DIFF_ENTRIES per list. */
  omitted: number;
};

/** What a revision shows of one value, and how many entries of each list. */
export const DIFF_VALUE_CHARS = 400;
export const DIFF_ENTRIES = 40;

/** Why a revision was made, as the trail's entries of the change say it. */
export type RevisionChange = {
  planId: string;
  cause: string;
  rationale: string | null;
  /** Steps whose status the change itself set (the diff's `status`). */
  marked: { stepId: string; to: StepStatus }[];
};

/** The plan_modified actions that change a plan's definition: every modify_plan action, not a stall or a cancel. */
const DEFINING_ACTIONS = new Set<string>([
  ...MODIFY_ACTIONS,
  "created",
  "branch_skipped_steps",
  "branch_failed_plan",
  "forked",
]);

/** Review decisions that change the step: modify rewrites it, skip and reject end it. */
const DEFINING_DECISIONS: Record<string, StepStatus | null> = {
  modify: null,
  skip: "skipped",
  reject: "failed",
};

const text = (value: unknown): string | null =>
  typeof value === "string" && value.length > 0 ? value : null;

/**
 * The revision a change's audit entries make, or null when they change no
 * plan's definition. One change makes one revision however many entries it
 * writes; its plan and cause are the first defining entry's.
 */
export function revisionOf(entries: readonly AuditEntry[]): RevisionChange | null {
  let change: RevisionChange | null = null;
  for (const entry of entries) {
    const payload = entry.payload as Record<string, unknown>;
    let cause: string | null = null;
    let rationale: string | null = null;
    const marked: RevisionChange["marked"] = [];
    if (entry.eventType === "plan_modified" && DEFINING_ACTIONS.has(String(payload.action))) {
      cause = String(payload.action);
      rationale = text(payload.modificationRationale) ?? text(payload.reason);
      const stepId = "stepId" in entry ? entry.stepId : undefined;
      if (cause === "fail_step" && stepId) marked.push({ stepId, to: "failed" });
      if (cause === "retry_step" && stepId) marked.push({ stepId, to: "pending" });
      if (cause === "branch_skipped_steps" && Array.isArray(payload.skippedStepIds)) {
        for (const id of payload.skippedStepIds) marked.push({ stepId: String(id), to: "skipped" });
      }
    } else if (
      entry.eventType === "user_reviewed" &&
      payload.action === "decision" &&
      String(payload.decision) in DEFINING_DECISIONS
    ) {
      cause = `review_${String(payload.decision)}`;
      rationale = text(payload.feedback);
      const to = DEFINING_DECISIONS[String(payload.decision)];
      if (to && entry.stepId) marked.push({ stepId: entry.stepId, to });
    }
    if (cause === null || entry.planId === null) continue;
    if (change === null) change = { planId: entry.planId, cause, rationale, marked };
    else if (change.planId === entry.planId) {
      change.marked.push(...marked);
      change.rationale ??= rationale;
    }
  }
  return change;
}

/** The first DIFF_VALUE_CHARS characters of a value (JSON text for anything but a string). */
export function diffValue(value: unknown): DiffValue {
  if (value === null || value === undefined) return null;
  const whole = typeof value === "string" ? value : JSON.stringify(value);
  // Cut by code points, so a cut never splits a character in two.
  const points = Array.from(whole.slice(0, DIFF_VALUE_CHARS * 2)).slice(0, DIFF_VALUE_CHARS);
  const shown = points.join("");
  return { text: shown, cut: shown.length < whole.length };
}

/**
 * The definitions a diff from `before` to `after` shows (their digests): the
 * first DIFF_ENTRIES added and removed steps' (the rest are only counted),
 * and both sides of a kept step whose digest changed. An unchanged step's
 * definition is never read, so a change reads what it changed, not the plan.
 */
export function definitionsShown(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
): string[] {
  const old = new Map((before ?? []).map((step) => [step.id, step.digest]));
  const now = new Set(after.map((step) => step.id));
  const wanted = new Set<string>();
  let added = 0;
  for (const step of [...after].sort((a, b) => a.stepOrder - b.stepOrder)) {
    const was = old.get(step.id);
    if (was === step.digest) continue;
    if (was !== undefined) wanted.add(was).add(step.digest);
    else if (added++ < DIFF_ENTRIES) wanted.add(step.digest);
  }
  let removed = 0;
  for (const step of [...(before ?? [])].sort((a, b) => a.stepOrder - b.stepOrder)) {
    if (!now.has(step.id) && removed++ < DIFF_ENTRIES) wanted.add(step.digest);
  }
  return [...wanted];
}

/**
 * The change from `before` (null for the first revision: every step added)
 * to `after`, each list in the steps' order after the change. Steps are
 * compared by digest; `definitions` holds what `definitionsShown` named. One
 * pass over each side with maps: linear in the two lists' lengths.
 */
export function diffRevision(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
  definitions: ReadonlyMap<string, ShownDefinition>,
  marked: RevisionChange["marked"] = [],
): RevisionDiff {
  const shown = (digest: string): ShownDefinition => {
    const definition = definitions.get(digest);
    if (!definition) throw new Error(`diffRevision: no definition for digest ${digest}`);
    return definition;
  };
  const old = new Map((before ?? []).map((step) => [step.id, step]));
  const now = new Map(after.map((step) => [step.id, step]));
  const sortedAfter = [...after].sort((a, b) => a.stepOrder - b.stepOrder);
  const sortedBefore = [...(before ?? [])].sort((a, b) => a.stepOrder - b.stepOrder);
  // A kept step's rank among the kept steps, before and after: a step moved
  // when its rank changed, so steps that only shifted around an added or a
  // removed one are not reported.
  const rankBefore = new Map<string, number>();
  for (const step of sortedBefore) if (now.has(step.id)) rankBefore.set(step.id, rankBefore.size);
  const diff: RevisionDiff = {
    added: [],
    removed: [],
    moved: [],
    instructions: [],
    arguments: [],
    status: [],
    omitted: 0,
  };
  const push = <K extends Exclude<keyof RevisionDiff, "omitted">>(
    list: K,
    entry: RevisionDiff[K][number],
  ) => {
    const entries = diff[list] as RevisionDiff[K][number][];
    if (entries.length < DIFF_ENTRIES) entries.push(entry);
    else diff.omitted++;
  };
  let rank = 0;
  for (const step of sortedAfter) {
    const was = old.get(step.id);
    if (!was) {
      // Beyond the list's entries only counted: its definition was not read.
      if (diff.added.length === DIFF_ENTRIES) {
        diff.omitted++;
        continue;
      }
      const definition = shown(step.digest);
      push("added", {
        stepId: step.id,
        stepOrder: step.stepOrder,
        stepType: definition.stepType,
        instructions: diffValue(definition.instructions),
      });
      continue;
    }
    if (rankBefore.get(step.id) !== rank) {
      push("moved", { stepId: step.id, from: was.stepOrder, to: step.stepOrder });
    }
    rank++;
    // The same digest is the same definition: nothing of it to show.
    if (was.digest === step.digest) continue;
    const from = shown(was.digest);
    const to = shown(step.digest);
    if (from.instructions !== to.instructions) {
      push("instructions", {
        stepId: step.id,
        stepOrder: step.stepOrder,
        from: diffValue(from.instructions),
        to: diffValue(to.instructions),
      });
    }
    const argsBefore = JSON.stringify(from.arguments ?? null);
    const argsAfter = JSON.stringify(to.arguments ?? null);
    if (argsBefore !== argsAfter) {
      push("arguments", {
        stepId: step.id,
        stepOrder: step.stepOrder,
        from: diffValue(from.arguments),
        to: diffValue(to.arguments),
      });
    }
  }
  for (const step of sortedBefore) {
    if (!now.has(step.id) && diff.removed.length === DIFF_ENTRIES) diff.omitted++;
    else if (!now.has(step.id)) {
      push("removed", {
        stepId: step.id,
        stepOrder: step.stepOrder,
        instructions: diffValue(shown(step.digest).instructions),
      });
    }
  }
  for (const { stepId, to } of marked) {
    const step = now.get(stepId);
    if (step) push("status", { stepId, stepOrder: step.stepOrder, to });
  }
  return diff;
}
