/**
 * A plan's revisions (docs/history-and-forks.md): which changes make one
 * (`revisionOf`, read from the audit entries the change writes, so every
 * writer of a change makes its revision the same way), and the diff between
 * two revisions' steps (`diffRevision`), compared by their definitions'
 * digests, linear in the lists' lengths and bounded in its own; of the
 * definitions it reads a fingerprint of those it compares
 * (`definitionsCompared`) and a cut of those it shows (`definitionsShown`).
 */
import type { AuditEntry } from "./audit-entries";
import { MODIFY_ACTIONS } from "./modify-change";
import type { RevisionEntry, RevisionStep, StepStatus, StepType } from "./states";

export type { RevisionEntry, RevisionStep };

/** A value in a diff: its first characters, and whether it was cut. */
export type DiffValue = { text: string; cut: boolean } | null;

/**
 * What a diff shows of a step's definition: its type, and its instructions
 * and arguments as `diffValue` cuts them (read cut, never whole).
 */
export type ShownDefinition = { stepType: StepType; instructions: DiffValue; arguments: DiffValue };

/**
 * What a diff compares of two definitions of a step: a fingerprint of its
 * instructions and one of its arguments, equal when the values are.
 */
export type ComparedDefinition = { instructions: string; arguments: string };

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
 * The definitions whose instructions and arguments a diff from `before` to
 * `after` compares (their digests): both sides of every kept step whose
 * digest changed. It reads only their fingerprints (`ComparedDefinition`), so
 * a change that renumbers every binding reads a few bytes per step.
 */
export function definitionsCompared(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
): string[] {
  const old = new Map((before ?? []).map((step) => [step.id, step.digest]));
  const wanted = new Set<string>();
  for (const step of after) {
    const was = old.get(step.id);
    if (was !== undefined && was !== step.digest) wanted.add(was).add(step.digest);
  }
  return [...wanted];
}

/** What `definitionsShown` hands the walk for a digest it records: never shown. */
const RECORDED: ShownDefinition = { stepType: "analyze", instructions: null, arguments: null };

/**
 * The definitions a diff from `before` to `after` shows (their digests): the
 * first DIFF_ENTRIES added and removed steps', and both sides of the first
 * DIFF_ENTRIES kept steps whose instructions, and of those whose arguments,
 * changed (by `compared`); the rest are only counted. It is the diff's own
 * walk, recording what it would show, so what is read and what is shown
 * cannot drift apart.
 */
export function definitionsShown(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
  compared: ReadonlyMap<string, ComparedDefinition>,
): string[] {
  const wanted = new Set<string>();
  walkDiff(before, after, compared, (digest) => {
    wanted.add(digest);
    return RECORDED;
  });
  return [...wanted];
}

/**
 * The change from `before` (null for the first revision: every step added)
 * to `after`, each list in the steps' order after the change. Steps are
 * compared by digest, a changed step's instructions and arguments by their
 * fingerprints in `compared` (what `definitionsCompared` named); `shown`
 * holds what `definitionsShown` named. One pass over each side with maps:
 * linear in the two lists' lengths.
 */
export function diffRevision(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
  compared: ReadonlyMap<string, ComparedDefinition>,
  shown: ReadonlyMap<string, ShownDefinition>,
  marked: RevisionChange["marked"] = [],
): RevisionDiff {
  return walkDiff(
    before,
    after,
    compared,
    (digest) => {
      const definition = shown.get(digest);
      if (!definition) throw new Error(`diffRevision: no definition for digest ${digest}`);
      return definition;
    },
    marked,
  );
}

/** The diff's one walk; `shown` gives a digest's cut values, asked only for an entry it builds. */
function walkDiff(
  before: readonly RevisionEntry[] | null,
  after: readonly RevisionEntry[],
  compared: ReadonlyMap<string, ComparedDefinition>,
  shown: (digest: string) => ShownDefinition,
  marked: RevisionChange["marked"] = [],
): RevisionDiff {
  const fingerprint = (digest: string): ComparedDefinition => {
    const definition = compared.get(digest);
    if (!definition) throw new Error(`diffRevision: no fingerprint for digest ${digest}`);
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
  // An entry is built only when its list has room: beyond DIFF_ENTRIES it is
  // only counted, and its definitions are never read.
  const push = <K extends Exclude<keyof RevisionDiff, "omitted">>(
    list: K,
    entry: () => RevisionDiff[K][number],
  ) => {
    const entries = diff[list] as RevisionDiff[K][number][];
    if (entries.length < DIFF_ENTRIES) entries.push(entry());
    else diff.omitted++;
  };
  let rank = 0;
  for (const step of sortedAfter) {
    const was = old.get(step.id);
    if (!was) {
      push("added", () => {
        const definition = shown(step.digest);
        return {
          stepId: step.id,
          stepOrder: step.stepOrder,
          stepType: definition.stepType,
          instructions: definition.instructions,
        };
      });
      continue;
    }
    if (rankBefore.get(step.id) !== rank) {
      push("moved", () => ({ stepId: step.id, from: was.stepOrder, to: step.stepOrder }));
    }
    rank++;
    // The same digest is the same definition: nothing of it to show.
    if (was.digest === step.digest) continue;
    const from = fingerprint(was.digest);
    const to = fingerprint(step.digest);
    for (const field of ["instructions", "arguments"] as const) {
      if (from[field] === to[field]) continue;
      push(field, () => ({
        stepId: step.id,
        stepOrder: step.stepOrder,
        from: shown(was.digest)[field],
        to: shown(step.digest)[field],
      }));
    }
  }
  for (const step of sortedBefore) {
    if (now.has(step.id)) continue;
    push("removed", () => ({
      stepId: step.id,
      stepOrder: step.stepOrder,
      instructions: shown(step.digest).instructions,
    }));
  }
  for (const { stepId, to } of marked) {
    const step = now.get(stepId);
    if (step) push("status", () => ({ stepId, stepOrder: step.stepOrder, to }));
  }
  return diff;
}
