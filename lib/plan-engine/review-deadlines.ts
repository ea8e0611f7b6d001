/**
 * Review deadlines (docs/reviews.md): when a review is due, when it is "due
 * soon", and what Cairn does itself when nobody answered in time. Pure: the
 * caller passes the clock as milliseconds since the epoch.
 */
import { AppError } from "./app-error";
import { decisionHeldBy, type GuardStep } from "./checkpoint-guard";
import { type DeciderKind, timeoutPassesWithoutPerson } from "./decisions";
import type { DecisionPolicy, ReviewDecision } from "./states";

export const TIMEOUT_ACTIONS = ["approve", "reject", "skip", "escalate"] as const;
export type TimeoutAction = (typeof TIMEOUT_ACTIONS)[number];

/** How the audit trail and the decision name Cairn when a deadline decides. */
export const DEADLINE_ACTOR_LABEL = "Cairn (deadline)";

/** The longest deadline a review may have: a year, so a typo cannot park a plan for ever. */
export const MAX_DEADLINE_SECONDS = 365 * 24 * 60 * 60;

/** "Due soon" comes 5 minutes before the deadline, or at 80% of a deadline shorter than 25 minutes. */
const DUE_SOON_LEAD_MS = 5 * 60 * 1000;
const DUE_SOON_SHARE = 0.2;

export type DeadlineRequest = {
  deadlineSeconds?: number | undefined;
  /** Milliseconds since the epoch. */
  deadlineAt?: number | undefined;
  onTimeout?: TimeoutAction | undefined;
};

export type TeamDeadlineDefaults = {
  reviewDeadlineSeconds: number | null;
  reviewOnTimeout: TimeoutAction | null;
};

export type ResolvedDeadline = { dueAt: number; onTimeout: TimeoutAction } | null;

/**
 * The deadline of a new review: the request's own (relative or absolute) with
 * its action, else the team's default. A deadline without an action, or an
 * action without a deadline, is a VALIDATION_ERROR, as is a deadline in the
 * past: the agent would otherwise believe a person has time to answer.
 */
export function resolveDeadline(
  request: DeadlineRequest,
  team: TeamDeadlineDefaults,
  now: number,
): ResolvedDeadline {
  if (request.deadlineSeconds !== undefined && request.deadlineAt !== undefined) {
    throw new AppError("VALIDATION_ERROR", "Give deadlineSeconds or deadlineAt, not both.", {
      field: "deadlineAt",
    });
  }
  const own =
    request.deadlineSeconds !== undefined
      ? now + request.deadlineSeconds * 1000
      : request.deadlineAt;
  if (own === undefined) {
    if (request.onTimeout !== undefined) {
      throw new AppError(
        "VALIDATION_ERROR",
        "onTimeout needs a deadline: add deadlineSeconds or deadlineAt.",
        { field: "onTimeout" },
      );
    }
    if (team.reviewDeadlineSeconds === null || team.reviewOnTimeout === null) return null;
    return { dueAt: now + team.reviewDeadlineSeconds * 1000, onTimeout: team.reviewOnTimeout };
  }
  if (own <= now) {
    throw new AppError("VALIDATION_ERROR", "deadlineAt is in the past: give a future time.", {
      field: "deadlineAt",
    });
  }
  if (own > now + MAX_DEADLINE_SECONDS * 1000) {
    throw new AppError("VALIDATION_ERROR", "The deadline may be at most a year away.", {
      field: "deadlineAt",
    });
  }
  const onTimeout = request.onTimeout ?? team.reviewOnTimeout;
  if (!onTimeout) {
    throw new AppError(
      "VALIDATION_ERROR",
      "A deadline needs onTimeout (approve, reject, skip or escalate): say what Cairn does when nobody answers.",
      { field: "onTimeout" },
    );
  }
  return { dueAt: own, onTimeout };
}

/** When a review with this deadline counts as due soon (its one `review.due_soon` event). */
export function dueSoonAt(createdAt: number, dueAt: number): number {
  return dueAt - Math.min(DUE_SOON_LEAD_MS, (dueAt - createdAt) * DUE_SOON_SHARE);
}

export type TimeoutOutcome =
  | {
      kind: "decide";
      decision: Extract<ReviewDecision, "approve" | "reject" | "skip">;
      feedback: string;
    }
  | { kind: "escalate"; to: EscalationTarget; reason: string };

const DONE: Record<Exclude<TimeoutAction, "escalate">, string> = {
  approve: "Cairn approved the step automatically",
  reject: "Cairn rejected the step automatically, so the plan failed",
  skip: "Cairn skipped the step automatically",
};

/**
 * What Cairn does with a review whose deadline passed. The feedback is the
 * decision's text, which the agent reads on its next call, so it says why.
 */
export function decideTimeout(action: TimeoutAction, dueAt: number): TimeoutOutcome {
  const when = new Date(dueAt).toISOString();
  if (action === "escalate") {
    // The deadline's own escalation is a chain's level: to the admins.
    return {
      kind: "escalate",
      to: TO_ADMINS,
      reason: `No reviewer answered by the deadline (${when}); Cairn handed the review to the admins.`,
    };
  }
  return {
    kind: "decide",
    decision: action,
    feedback: `No reviewer answered by the deadline (${when}); ${DONE[action]} (onTimeout: ${action}).`,
  };
}

/** A pending review's deadline as stored: its action, who requested it, and whether the team set it all. */
export type StoredTimeout = {
  onTimeout: TimeoutAction;
  requestedBy: DeciderKind;
  /** The whole deadline (time and action) is the team's default: the team's own choice. */
  fromTeam: boolean;
};

export type TimeoutInForce = {
  onTimeout: TimeoutAction;
  /** Set when the stored action may not run under the policy in force, with why. */
  replaced: { from: TimeoutAction; reason: string } | null;
};

/**
 * The action a deadline may run under the policy in force now (docs/reviews.md,
 * "Deadlines under a policy switch"): its own, unless a requester who is no
 * person timed it to approve or skip where only people decide. Then the team's
 * own action runs instead, when that leaves the step to a person at the
 * requester's time, else the review goes to the admins. Used where the policy
 * changes (each pending review) and where the deadline fires.
 */
export function timeoutActionInForce(
  policy: DecisionPolicy,
  stored: StoredTimeout,
  teamOnTimeout: TimeoutAction | null,
): TimeoutInForce {
  const forbidden = (action: TimeoutAction | null) =>
    action === null || timeoutPassesWithoutPerson(policy, stored.requestedBy, action);
  if (stored.fromTeam || !forbidden(stored.onTimeout)) {
    return { onTimeout: stored.onTimeout, replaced: null };
  }
  const onTimeout = forbidden(teamOnTimeout) ? "escalate" : (teamOnTimeout as TimeoutAction);
  return {
    onTimeout,
    replaced: {
      from: stored.onTimeout,
      reason: deadlineReplacedReason(stored.onTimeout, onTimeout),
    },
  };
}

/** Where a reviewed step stands: its order and its plan's checkpoints, what the checkpoint rule reads. */
export type ReviewedStepHold = { stepOrder: number; checkpoints: readonly GuardStep[] };

/**
 * The action a deadline runs when it fires, once the checkpoint rule has had
 * its say: an approve that rule refuses now (`decisionHeldBy`: a review
 * asked before request_user_review refused a step behind a checkpoint nobody
 * has decided) would fail at every check until a person decides that
 * checkpoint, so the review goes to the admins instead, with why. Skip and
 * reject are never held.
 */
export function timeoutActionNotHeld(
  inForce: TimeoutInForce,
  step: ReviewedStepHold,
): TimeoutInForce {
  const held =
    inForce.onTimeout === "escalate"
      ? undefined
      : decisionHeldBy(step.checkpoints, step, inForce.onTimeout);
  if (!held) return inForce;
  return {
    onTimeout: "escalate",
    replaced: {
      // A policy's replacement is never an approve, so this one replaces the stored action.
      from: inForce.onTimeout,
      reason: `The deadline's "${inForce.onTimeout}" cannot go: step ${held.stepOrder}, a checkpoint nobody has decided yet, now stands before this step, so the review goes to the admins instead.`,
    },
  };
}

/** Why a deadline's action was replaced, for the plan's trail and the agent. */
export function deadlineReplacedReason(from: TimeoutAction, to: TimeoutAction): string {
  const instead =
    to === "escalate"
      ? "hands the review to the admins when it passes"
      : `applies the team's own action when it passes, ${to}`;
  return `The team lets only people decide checkpoints (people_only), so the deadline's "${from}", set by an agent, would pass the checkpoint without a person; Cairn ${instead}.`;
}

/** A chain's limits (docs/reviews.md, "Escalation chains"). */
export const MAX_ESCALATION_LEVELS = 5;
export const MIN_LEVEL_SECONDS = 60;
export const MAX_LEVEL_SECONDS = 30 * 24 * 60 * 60;
export const MAX_LEVEL_PEOPLE = 10;

/** What a level's time is counted from: the review's request, or the level before it (the request for the first). */
export const ESCALATION_FROM = ["request", "previous"] as const;
export type EscalationFrom = (typeof ESCALATION_FROM)[number];

/** Who a level hands the review to: every admin of the team, or named people (one or more). */
export type EscalationTarget = { kind: "admins" } | { kind: "people"; userIds: string[] };
export const TO_ADMINS: EscalationTarget = { kind: "admins" };

export type EscalationLevel = { afterSeconds: number; from: EscalationFrom; to: EscalationTarget };

/**
 * A chain's shape, checked where it is set: 1 to 5 levels, each after 1 minute
 * to 30 days, people levels naming 1 to 10 distinct people. Whether those are
 * active members is the service's check (it needs the database).
 */
export function checkEscalationChain(levels: readonly EscalationLevel[]): void {
  const invalid = (message: string, index?: number) =>
    new AppError("VALIDATION_ERROR", message, {
      field: index === undefined ? "levels" : `levels.${index}`,
    });
  if (levels.length < 1 || levels.length > MAX_ESCALATION_LEVELS) {
    throw invalid(`An escalation chain has 1 to ${MAX_ESCALATION_LEVELS} levels.`);
  }
  levels.forEach((level, index) => {
    const n = index + 1;
    if (
      !Number.isInteger(level.afterSeconds) ||
      level.afterSeconds < MIN_LEVEL_SECONDS ||
      level.afterSeconds > MAX_LEVEL_SECONDS
    ) {
      throw invalid(`Level ${n}: the time before it is 1 minute to 30 days.`, index);
    }
    if (level.to.kind === "people") {
      const count = new Set(level.to.userIds).size;
      if (count === 0 || count > MAX_LEVEL_PEOPLE || count !== level.to.userIds.length) {
        throw invalid(
          `Level ${n}: name 1 to ${MAX_LEVEL_PEOPLE} different people, or hand it to the admins.`,
          index,
        );
      }
    }
  });
}

/**
 * When level `index` (0-based) of a chain is due: its duration after the
 * request or after the level before it (whose due time is `previousDueAt`;
 * the request's time for the first). Never before the level before it, so
 * the levels apply in order even when a later one is counted from the request.
 */
export function escalationDueAt(
  levels: readonly EscalationLevel[],
  index: number,
  requestedAt: number,
  previousDueAt: number,
): number {
  const level = levels[index];
  if (!level) throw new RangeError(`the chain has no level ${index + 1}`);
  if (index === 0) return requestedAt + level.afterSeconds * 1000;
  const base = level.from === "request" ? requestedAt : previousDueAt;
  return Math.max(base + level.afterSeconds * 1000, previousDueAt);
}

export type NextEscalation = { level: number; dueAt: number } | null;

/**
 * The level after the `applied` levels already applied (1-based, as the
 * trail names it) and when it is due, or null when the chain is done. The
 * last applied level was due at `lastDueAt` (the request's time before any).
 */
export function nextEscalation(
  levels: readonly EscalationLevel[],
  applied: number,
  requestedAt: number,
  lastDueAt: number,
): NextEscalation {
  if (applied >= levels.length) return null;
  return {
    level: applied + 1,
    dueAt: escalationDueAt(levels, applied, requestedAt, lastDueAt),
  };
}

/** Why a level applied, for the trail and the agent: when it came, and to whom. */
export function escalationReason(level: number, dueAt: number, toLabel: string): string {
  return `No reviewer answered by ${new Date(dueAt).toISOString()}; Cairn handed the review to ${toLabel} (escalation level ${level}).`;
}

/**
 * A chain in a fixed key order, as the team's trail compares it (jsonb hands
 * keys back shortest first, a form in its own order).
 */
export function canonicalEscalationChain(
  levels: readonly EscalationLevel[] | null,
): EscalationLevel[] | null {
  if (levels === null) return null;
  return levels.map(({ afterSeconds, from, to }) => ({
    afterSeconds,
    from,
    to: to.kind === "admins" ? { kind: "admins" } : { kind: "people", userIds: [...to.userIds] },
  }));
}
