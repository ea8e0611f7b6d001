/**
 * The team's trail (docs/reviews.md, "The team's trail"): every change to the
 * team's rules on checkpoints, written with the change in one transaction.
 * Each rule's column is named once here, so the setters (decision policy,
 * review defaults, trusted clients, quorum, escalation chain) share one writer and a new event type does
 * not compile until it says what it changes. The admin page's read of it is
 * lib/services/views/team-rules.ts.
 */
import "server-only";
import { eq } from "drizzle-orm";
import type { Database, Transaction } from "../../db/client";
import { type TEAM_EVENT_TYPES, teamAuditLog, tenants } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import { canonicalEscalationChain, type EscalationLevel } from "../../plan-engine/review-deadlines";
import type { DecisionPolicy } from "../../plan-engine/states";
import type { Actor, ServiceContext } from "../shared/context";

export type TeamEventType = (typeof TEAM_EVENT_TYPES)[number];
type TenantRow = typeof tenants.$inferSelect;

/** How one rule is read from the team's row and written back. */
type TeamRule<Value> = { read(team: TenantRow): Value; write(to: Value): Partial<TenantRow> };

const TEAM_RULES = {
  decision_policy_changed: {
    read: (team): DecisionPolicy => team.decisionPolicy,
    write: (to) => ({ decisionPolicy: to }),
  } satisfies TeamRule<DecisionPolicy>,
  review_defaults_changed: {
    read: (team) => ({
      deadlineSeconds: team.reviewDeadlineSeconds,
      onTimeout: team.reviewOnTimeout,
    }),
    write: (to) => ({ reviewDeadlineSeconds: to.deadlineSeconds, reviewOnTimeout: to.onTimeout }),
  } satisfies TeamRule<{ deadlineSeconds: number | null; onTimeout: TenantRow["reviewOnTimeout"] }>,
  trusted_clients_changed: {
    read: (team) => team.trustedClients ?? null,
    write: (to) => ({ trustedClients: to }),
  } satisfies TeamRule<string[] | null>,
  review_quorum_changed: {
    read: (team): number => team.reviewApprovalsRequired,
    write: (to) => ({ reviewApprovalsRequired: to }),
  } satisfies TeamRule<number>,
  review_escalation_changed: {
    read: (team) => canonicalEscalationChain(team.reviewEscalationChain ?? null),
    write: (to) => ({ reviewEscalationChain: to }),
  } satisfies TeamRule<EscalationLevel[] | null>,
} satisfies Record<TeamEventType, TeamRule<unknown>>;

export type TeamRuleValue<Event extends TeamEventType> = ReturnType<
  (typeof TEAM_RULES)[Event]["read"]
>;

export type TeamRuleChange<Event extends TeamEventType> = {
  from: TeamRuleValue<Event>;
  to: TeamRuleValue<Event>;
  changed: boolean;
};

/**
 * Sets one of the team's rules and, when it changed, writes the trail row
 * (who, when, `{ from, to }`) in the same transaction. The team's row is locked
 * first, so two admins saving at once each record what they really replaced.
 * `check` runs inside the transaction with the current value, before anything
 * is written (the trusted clients' check of new client ids); `effects` runs
 * after the change in the same transaction, and what it answers is kept in the
 * trail row beside `{ from, to }` (a policy switch's revisit of pending reviews).
 */
export async function changeTeamRule<Event extends TeamEventType>(
  db: Database,
  change: {
    tenantId: string;
    actor: Actor;
    eventType: Event;
    /** The new value, or how to work it out inside the change's transaction (the team's row locked). */
    to: TeamRuleValue<Event> | ((tx: Transaction) => Promise<TeamRuleValue<Event>>);
    check?: (tx: Transaction, from: TeamRuleValue<Event>) => Promise<void>;
    effects?: (tx: Transaction, team: TenantRow) => Promise<Record<string, unknown>>;
  },
): Promise<TeamRuleChange<Event>> {
  // The map's entries differ in type; this one is the entry of `Event`.
  const rule = TEAM_RULES[change.eventType] as unknown as TeamRule<TeamRuleValue<Event>>;
  return db.transaction(async (tx) => {
    const [team] = await tx
      .select()
      .from(tenants)
      .where(eq(tenants.id, change.tenantId))
      .for("update");
    if (!team) throw new AppError("NOT_FOUND", "This team does not exist.");
    const from = rule.read(team);
    await change.check?.(tx, from);
    // No rule's value is a function, so a function is the value worked out here.
    const value =
      typeof change.to === "function"
        ? await (change.to as (tx: Transaction) => Promise<TeamRuleValue<Event>>)(tx)
        : (change.to as TeamRuleValue<Event>);
    const written = rule.write(value);
    // Compared as the row will hold it, so the caller's key order is no change.
    const to = rule.read({ ...team, ...written });
    if (JSON.stringify(from) === JSON.stringify(to)) return { from, to, changed: false };
    await tx.update(tenants).set(written).where(eq(tenants.id, team.id));
    const effects = (await change.effects?.(tx, { ...team, ...written })) ?? {};
    await tx.insert(teamAuditLog).values({
      tenantId: team.id,
      eventType: change.eventType,
      actorType: change.actor.type,
      actorId: change.actor.id,
      actorLabel: change.actor.label,
      payload: { ...effects, from, to },
    });
    return { from, to, changed: true };
  });
}

/** A signed-in admin's change to one rule of their own team; answers the rule as it now stands. */
export async function setOwnTeamRule<Event extends TeamEventType>(
  ctx: ServiceContext,
  eventType: Event,
  to: TeamRuleValue<Event>,
): Promise<TeamRuleValue<Event>> {
  const change = await changeTeamRule(ctx.db, {
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    eventType,
    to,
  });
  return change.to;
}
