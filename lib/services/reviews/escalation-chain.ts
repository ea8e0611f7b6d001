/**
 * The team's escalation chain (docs/reviews.md, "Escalation chains"): the
 * levels a pending review is handed on through while nobody answers, each to
 * the admins or to named people of the team. Set on the admin page; a change
 * is written to the team's trail (team-trail.ts) and applies to reviews
 * requested after it, each of which keeps a copy. The scheduler's step that
 * applies the levels is `applyDueEscalations` in escalation-levels.ts.
 */
import "server-only";
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { tenants, users } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import {
  checkEscalationChain,
  ESCALATION_FROM,
  type EscalationLevel,
  type EscalationTarget,
  MAX_ESCALATION_LEVELS,
  MAX_LEVEL_PEOPLE,
} from "../../plan-engine/review-deadlines";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { changeTeamRule } from "./team-trail";

/**
 * A level as the admin names it: people by their e-mail. The ranges are the
 * engine's check (`checkEscalationChain`), whose messages name the level; the
 * lists' bounds here only cap what is read.
 */
const levelInput = z.strictObject({
  afterSeconds: z.number().int(),
  from: z.enum(ESCALATION_FROM),
  to: z.union([
    z.literal("admins"),
    z.strictObject({
      people: z.array(z.email("must be a team member's e-mail address")).max(MAX_LEVEL_PEOPLE),
    }),
  ]),
});

/** The chain to set; null removes it. */
export const escalationChainInput = z.strictObject({
  levels: z.array(levelInput).max(MAX_ESCALATION_LEVELS).nullable(),
});

/** A chain as stored (tenant and review rows), parsed where the scheduler reads it back. */
export const storedEscalationChain = z.array(
  z.object({
    afterSeconds: z.number(),
    from: z.enum(ESCALATION_FROM),
    to: z.union([
      z.object({ kind: z.literal("admins") }),
      z.object({ kind: z.literal("people"), userIds: z.array(z.string()) }),
    ]),
  }),
);

type Member = { userId: string; email: string };

/** The team's active members among `where` (at most the chain's people, so bounded). */
function activeMembers(tx: Executor, tenantId: string, where: ReturnType<typeof inArray>) {
  return tx
    .select({ userId: users.id, email: users.email })
    .from(users)
    .where(and(eq(users.tenantId, tenantId), isNull(users.disabledAt), where));
}

/** The people named by e-mail, as ids: one who is no active member of the team is a VALIDATION_ERROR. */
async function resolvePeople(
  tx: Executor,
  tenantId: string,
  levels: z.output<typeof levelInput>[],
): Promise<EscalationLevel[]> {
  const emails = [
    ...new Set(
      levels.flatMap((level) =>
        level.to === "admins" ? [] : level.to.people.map((e) => e.toLowerCase()),
      ),
    ),
  ];
  const found =
    emails.length === 0
      ? []
      : await activeMembers(tx, tenantId, inArray(sql`lower(${users.email})`, emails));
  const byEmail = new Map(found.map((member) => [member.email.toLowerCase(), member.userId]));
  const resolved = levels.map((level, index): EscalationLevel => {
    if (level.to === "admins") return { ...level, to: { kind: "admins" } };
    const userIds = level.to.people.map((email) => {
      const userId = byEmail.get(email.toLowerCase());
      if (!userId) {
        throw new AppError(
          "VALIDATION_ERROR",
          `Level ${index + 1}: ${email} is not an active member of this team. Name people who sign in to this team, or hand the level to the admins. Nothing was changed.`,
          { field: `levels.${index}` },
        );
      }
      return userId;
    });
    return { ...level, to: { kind: "people", userIds } };
  });
  checkEscalationChain(resolved);
  return resolved;
}

/** A level as the admin page shows it: people by e-mail. */
export type EscalationLevelView = {
  afterSeconds: number;
  from: EscalationLevel["from"];
  to: "admins" | { people: string[] };
};

export async function getEscalationChain(
  ctx: ServiceContext,
): Promise<EscalationLevelView[] | null> {
  const [team] = await ctx.db
    .select({ chain: tenants.reviewEscalationChain })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  const levels = team?.chain ? storedEscalationChain.parse(team.chain) : null;
  if (!levels) return null;
  const ids = [...new Set(levels.flatMap((l) => (l.to.kind === "people" ? l.to.userIds : [])))];
  // Disabled since the chain was set: still named, so the admin sees whom the level lost.
  const members: Member[] =
    ids.length === 0
      ? []
      : await ctx.db
          .select({ userId: users.id, email: users.email })
          .from(users)
          .where(and(eq(users.tenantId, ctx.tenantId), inArray(users.id, ids)));
  const emailOf = new Map(members.map((member) => [member.userId, member.email]));
  return levels.map((level) => ({
    afterSeconds: level.afterSeconds,
    from: level.from,
    to:
      level.to.kind === "admins"
        ? "admins"
        : { people: level.to.userIds.flatMap((id) => emailOf.get(id) ?? []) },
  }));
}

export async function setEscalationChain(
  ctx: ServiceContext,
  raw: z.input<typeof escalationChainInput>,
): Promise<EscalationLevel[] | null> {
  const input = parseInput(escalationChainInput, raw);
  const change = await changeTeamRule(ctx.db, {
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    eventType: "review_escalation_changed",
    // The people are resolved inside the change's transaction, the team's row locked.
    to: async (tx) =>
      input.levels === null ? null : resolvePeople(tx, ctx.tenantId, input.levels),
  });
  return change.to;
}

/**
 * Who a level hands the review to now: its people who are still active
 * members (the admins when none is left), as the review's assignee columns.
 */
export async function escalationAssignee(
  tx: Executor,
  tenantId: string,
  to: EscalationTarget,
): Promise<{
  assignedUserId: string | null;
  assignedRole: "admin" | null;
  assignedUserIds: string[] | null;
  emails: string[];
}> {
  const none = { assignedUserId: null, assignedUserIds: null, emails: [] };
  if (to.kind === "admins") return { ...none, assignedRole: "admin" };
  const members = await activeMembers(tx, tenantId, inArray(users.id, to.userIds));
  // In the chain's order, so the trail names them as the admin did.
  const ordered = to.userIds.flatMap((id) => members.filter((m) => m.userId === id));
  const [only] = ordered;
  if (!only) return { ...none, assignedRole: "admin" };
  return {
    assignedUserId: ordered.length === 1 ? only.userId : null,
    assignedRole: null,
    assignedUserIds: ordered.length === 1 ? null : ordered.map((m) => m.userId),
    emails: ordered.map((m) => m.email),
  };
}
