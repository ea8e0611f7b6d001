/**
 * Cairn's system of record. Every tenant-owned row carries `tenant_id`, and every
 * service query filters on it (see docs/architecture.md), so an id guessed from
 * another tenant finds nothing.
 *
 * Relative imports (not `@/`) because drizzle-kit loads this file outside Next.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  json,
  jsonb,
  type PgColumn,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import type { PauseReason } from "../plan-engine/bindings";
import type { Cancellation } from "../plan-engine/cancel";
import type { CitationCheck } from "../plan-engine/citations";
import type { AwaitingSteps } from "../plan-engine/plan-snapshot";
import { type EscalationLevel, MAX_ESCALATION_LEVELS } from "../plan-engine/review-deadlines";
import type { RevisionDiff, RevisionEntry, RevisionStep } from "../plan-engine/revisions";
import { SKILL_EXECUTION_STATUSES } from "../plan-engine/skill-executions";
import type { SourceKind } from "../plan-engine/source-key";
import {
  AUDIT_EVENT_TYPES,
  DECISION_CHANNELS,
  DECISION_POLICIES,
  DEFAULT_DECISION_POLICY,
  MAX_APPROVALS_REQUIRED,
  PLAN_STATUSES,
  REVIEW_DECISIONS,
  STEP_STATUSES,
  STEP_TYPES,
} from "../plan-engine/states";

export const USER_ROLES = ["researcher", "admin"] as const;
/** `oauth_app`: an AI platform connected through OAuth, acting for the user who approved it. */
export const ACTOR_TYPES = ["api_key", "user", "system", "oauth_app"] as const;
export const OAUTH_CLIENT_KINDS = ["registered", "metadata_document"] as const;
export const OAUTH_TOKEN_KINDS = ["access", "refresh"] as const;
// The engine owns the tracking record's states (and their transitions); the
// schema only stores them.
export { SKILL_EXECUTION_STATUSES };
export const REVIEW_REQUEST_STATUSES = ["pending", "decided", "withdrawn"] as const;
export const FEEDBACK_TYPES = ["initial", "closing"] as const;
/** What Cairn does itself when a review's deadline passes. */
export const REVIEW_TIMEOUT_ACTIONS = ["approve", "reject", "skip", "escalate"] as const;
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const userRole = pgEnum("user_role", USER_ROLES);
export const planStatus = pgEnum("plan_status", PLAN_STATUSES);
export const stepStatus = pgEnum("step_status", STEP_STATUSES);
export const stepType = pgEnum("step_type", STEP_TYPES);
export const auditEventType = pgEnum("audit_event_type", AUDIT_EVENT_TYPES);
export const actorType = pgEnum("actor_type", ACTOR_TYPES);
export const skillExecutionStatus = pgEnum("skill_execution_status", SKILL_EXECUTION_STATUSES);
export const reviewRequestStatus = pgEnum("review_request_status", REVIEW_REQUEST_STATUSES);
export const reviewDecision = pgEnum("review_decision_kind", REVIEW_DECISIONS);
export const feedbackType = pgEnum("feedback_type", FEEDBACK_TYPES);
export const reviewTimeoutAction = pgEnum("review_timeout_action", REVIEW_TIMEOUT_ACTIONS);
export const deliveryStatus = pgEnum("delivery_status", DELIVERY_STATUSES);
export const oauthClientKind = pgEnum("oauth_client_kind", OAUTH_CLIENT_KINDS);
export const oauthTokenKind = pgEnum("oauth_token_kind", OAUTH_TOKEN_KINDS);
export const decisionPolicy = pgEnum("decision_policy", DECISION_POLICIES);
export const decisionChannel = pgEnum("decision_channel", DECISION_CHANNELS);

const id = () => uuid("id").primaryKey().defaultRandom();
const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();
/**
 * The row's tenant, plan, user or step, the row deleted with it (the tables
 * are declared below; a reference is followed only when the schema is read).
 */
const owner = (name: string, target: () => PgColumn) =>
  uuid(name).notNull().references(target, { onDelete: "cascade" });
const tenantId = () => owner("tenant_id", () => tenants.id);
const planId = () => owner("plan_id", () => researchPlans.id);
const userId = () => owner("user_id", () => users.id);
const stepId = () => owner("step_id", () => planSteps.id);
/** Who acted, in every trail: the actor's kind, id and a readable name. */
const actor = () => ({
  actorType: actorType("actor_type").notNull(),
  /** The API key id or user id that acted; null for the system. */
  actorId: uuid("actor_id"),
  /** A readable name of the actor kept with the row, so the trail survives key revocation. */
  actorLabel: text("actor_label").notNull(),
});

export const tenants = pgTable(
  "tenant",
  {
    id: id(),
    name: text("name").notNull().unique(),
    createdAt: createdAt(),
    /** The team's default review deadline, used when request_user_review names none. */
    reviewDeadlineSeconds: integer("review_deadline_seconds"),
    /** The team's default action when that deadline passes; null waits forever. */
    reviewOnTimeout: reviewTimeoutAction("review_on_timeout"),
    /** Who may decide a checkpoint: people only, or also agents relaying a person's answer. */
    decisionPolicy: decisionPolicy("decision_policy").notNull().default(DEFAULT_DECISION_POLICY),
    /**
     * The OAuth clients (their `client_id`) whose in-client answers and card
     * decisions count as a person's; null names none: every connected app a
     * person authorized in Cairn's browser flow under people_and_agents, none
     * under people_only (docs/reviews.md).
     */
    trustedClients: jsonb("trusted_clients").$type<string[]>(),
    /**
     * How many distinct people must approve a review before it passes (the
     * team's quorum, docs/reviews.md "Quorum"); a plan or a request may ask for
     * more, never fewer.
     */
    reviewApprovalsRequired: integer("review_approvals_required").notNull().default(1),
    /**
     * The team's escalation chain (docs/reviews.md, "Escalation chains"): the
     * levels a review is handed on through while nobody answers; null, none.
     * Checked by lib/services/reviews/escalation-chain.ts; copied onto each
     * review requested while it stands.
     */
    reviewEscalationChain: jsonb("review_escalation_chain").$type<EscalationLevel[]>(),
  },
  (t) => [
    check(
      "tenant_review_approvals_required_check",
      sql`${t.reviewApprovalsRequired} between 1 and ${sql.raw(String(MAX_APPROVALS_REQUIRED))}`,
    ),
    check(
      "tenant_review_escalation_chain_check",
      sql`${t.reviewEscalationChain} is null or jsonb_array_length(${t.reviewEscalationChain}) between 1 and ${sql.raw(String(MAX_ESCALATION_LEVELS))}`,
    ),
  ],
);

/** What the team's trail records: changes to the team's rules on checkpoints. */
export const TEAM_EVENT_TYPES = [
  "decision_policy_changed",
  "review_defaults_changed",
  "trusted_clients_changed",
  "review_quorum_changed",
  "review_escalation_changed",
] as const;
export const teamEventType = pgEnum("team_event_type", TEAM_EVENT_TYPES);

/**
 * The team's trail: who changed the team's rules on checkpoints, when, and from
 * what to what (payload `{ from, to }`). Apart from the plan audit log, since a
 * rule covers every plan of the team.
 */
export const teamAuditLog = pgTable(
  "team_audit_log",
  {
    id: id(),
    tenantId: tenantId(),
    eventType: teamEventType("event_type").notNull(),
    ...actor(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("team_audit_log_tenant_time_idx").on(t.tenantId, t.createdAt)],
);

export const users = pgTable(
  "app_user",
  {
    id: id(),
    tenantId: tenantId(),
    email: text("email").notNull(),
    name: text("name"),
    passwordHash: text("password_hash").notNull(),
    role: userRole("role").notNull().default("researcher"),
    createdAt: createdAt(),
    /** Set while an admin has disabled the user: no sign-in, no session, no API key. */
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    /**
     * Carried in every session token and compared on every request: raising it
     * (a password change, disabling the user) ends every session issued before.
     */
    sessionVersion: integer("session_version").notNull().default(0),
    /** The person's own switch for review e-mails. */
    emailNotifications: boolean("email_notifications").notNull().default(true),
  },
  // E-mail is the sign-in name, so it is unique across tenants (case-insensitive).
  (t) => [uniqueIndex("app_user_email_uq").on(sql`lower(${t.email})`)],
);

/** What the account trail records: changes to a person's access and the credentials they ended. */
export const ACCOUNT_EVENT_TYPES = ["password_changed", "user_disabled", "user_enabled"] as const;
export const accountEventType = pgEnum("account_event_type", ACCOUNT_EVENT_TYPES);

/**
 * The account trail: who changed a person's access, and which of their
 * credentials that ended (sessions, connected apps, API keys). Apart from the
 * plan audit log, which records plans. The person is named by id and e-mail
 * kept in the row (no foreign key), so the trail outlives a deleted account.
 */
export const accountAuditLog = pgTable(
  "account_audit_log",
  {
    id: id(),
    tenantId: tenantId(),
    userId: uuid("user_id").notNull(),
    userEmail: text("user_email").notNull(),
    eventType: accountEventType("event_type").notNull(),
    ...actor(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("account_audit_log_tenant_time_idx").on(t.tenantId, t.createdAt)],
);

/**
 * Attempt counters of sign-in and first-run set-up, shared by every app instance
 * (lib/services/accounts/attempt-limits.ts): one row per kind and key (a hashed e-mail, a
 * client address), updated by one upsert per attempt before any password is hashed.
 */
export const attemptLimits = pgTable(
  "attempt_limit",
  {
    kind: text("kind").notNull(),
    key: text("key").notNull(),
    /** Attempts counted in the current window. */
    attempts: integer("attempts").notNull().default(0),
    windowStartedAt: timestamp("window_started_at", { withTimezone: true }).notNull(),
    /** Attempts are refused until then. */
    blockedUntil: timestamp("blocked_until", { withTimezone: true }),
    /** How many times the key was blocked recently: each block lasts twice the one before. */
    blocks: integer("blocks").notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.kind, t.key] }),
    // Pruning of counters nobody has touched for a day.
    index("attempt_limit_updated_idx").on(t.updatedAt),
  ],
);

/**
 * One-time codes that open the first-run set-up: only their SHA-256 is stored.
 * Each server start on a fresh install (and `npm run cairn -- setup-code`) adds
 * one; all are deleted when the first admin is created.
 */
export const setupCodes = pgTable("setup_code", {
  id: id(),
  codeHash: text("code_hash").notNull().unique(),
  createdAt: createdAt(),
});

export const apiKeys = pgTable(
  "api_key",
  {
    id: id(),
    tenantId: tenantId(),
    userId: userId(),
    name: text("name").notNull(),
    /** The first characters of the key, shown in lists so a person can tell keys apart. */
    keyPrefix: text("key_prefix").notNull(),
    /** SHA-256 of the whole key: keys are 256-bit random, so a fast hash is enough and lookups stay O(1). */
    keyHash: text("key_hash").notNull().unique(),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    index("api_key_tenant_idx").on(t.tenantId, t.createdAt),
    // A user's keys, which deleting the user deletes (tests/foreign-keys-indexed.test.ts).
    index("api_key_user_idx").on(t.userId),
  ],
);

/**
 * OAuth clients (docs/oauth.md): registered by Dynamic Client Registration, or
 * the cached copy of a Client ID Metadata Document whose URL is the client_id.
 * Every client is public (no secret). Names are whatever the client said: shown
 * as unverified text, never trusted.
 */
export const oauthClients = pgTable("oauth_client", {
  id: id(),
  /** What the client sends as client_id: a generated id, or the metadata document's URL. */
  clientId: text("client_id").notNull().unique(),
  kind: oauthClientKind("kind").notNull(),
  clientName: text("client_name"),
  redirectUris: jsonb("redirect_uris").$type<string[]>().notNull(),
  createdAt: createdAt(),
  /** A metadata document's copy: when it was fetched, and until when it is used without fetching again. */
  fetchedAt: timestamp("fetched_at", { withTimezone: true }),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  /**
   * Why the metadata document could not be used, when its last fetch failed:
   * the refusal is answered from here until expires_at instead of fetching
   * again on every request (redirect_uris is then empty).
   */
  fetchError: text("fetch_error"),
});

/** One-time authorization codes: only the SHA-256 is stored; used_at is set by the one exchange. */
export const oauthAuthorizationCodes = pgTable(
  "oauth_authorization_code",
  {
    id: id(),
    tenantId: tenantId(),
    codeHash: text("code_hash").notNull().unique(),
    clientId: uuid("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    userId: userId(),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    codeChallengeMethod: text("code_challenge_method").notNull(),
    resource: text("resource").notNull(),
    scope: text("scope").notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [
    index("oauth_authorization_code_expires_idx").on(t.expiresAt),
    // A client's codes: every scheduler tick deletes unused clients, checking for them first.
    index("oauth_authorization_code_client_idx").on(t.clientId),
    index("oauth_authorization_code_user_idx").on(t.userId),
  ],
);

/**
 * A connected app: one user's approval of one client, for Cairn's MCP resource.
 * Its tokens act as that user in that user's tenant; revoking it (or disabling
 * the user) stops every token at once, because each request joins to it.
 */
export const oauthGrants = pgTable(
  "oauth_grant",
  {
    id: id(),
    tenantId: tenantId(),
    userId: userId(),
    clientId: uuid("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    resource: text("resource").notNull(),
    scope: text("scope").notNull(),
    createdAt: createdAt(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    index("oauth_grant_tenant_user_idx").on(t.tenantId, t.userId),
    index("oauth_grant_client_idx").on(t.clientId),
    index("oauth_grant_user_idx").on(t.userId),
  ],
);

/** Access and refresh tokens of a grant, stored as SHA-256 like API keys. */
export const oauthTokens = pgTable(
  "oauth_token",
  {
    id: id(),
    grantId: uuid("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    kind: oauthTokenKind("kind").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    /** Set when the token is rotated (a refresh token once used) or its grant is revoked. */
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [index("oauth_token_grant_idx").on(t.grantId)],
);

export const skillExecutions = pgTable(
  "skill_execution",
  {
    id: id(),
    tenantId: tenantId(),
    planId: uuid("plan_id").references(() => researchPlans.id, { onDelete: "set null" }),
    skillName: text("skill_name").notNull(),
    status: skillExecutionStatus("status").notNull().default("started"),
    sessionId: text("session_id"),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    errorMessage: text("error_message"),
    closedReason: text("closed_reason"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
  },
  (t) => [
    // create_research_plan's auto-link: the newest `started` execution of a session.
    index("skill_execution_session_idx").on(t.tenantId, t.sessionId, t.status, t.createdAt),
    index("skill_execution_plan_idx").on(t.planId),
  ],
);

export const researchPlans = pgTable(
  "research_plan",
  {
    id: id(),
    tenantId: tenantId(),
    name: text("name").notNull(),
    researchQuestion: text("research_question").notNull(),
    status: planStatus("status").notNull().default("planning"),
    planDesignRationale: text("plan_design_rationale"),
    outputFormattingNotes: text("output_formatting_notes"),
    sessionId: text("session_id"),
    createdByKeyId: uuid("created_by_key_id").references(() => apiKeys.id, {
      onDelete: "set null",
    }),
    createdByUserId: uuid("created_by_user_id").references(() => users.id, {
      onDelete: "set null",
    }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    /**
     * Set while the plan waits for the agent to act on a fired `add_steps`
     * condition whose step was the last open one: the plan stays `executing`
     * instead of completing underneath the agent (docs/protocol.md, "The loop").
     */
    awaitingSteps: jsonb("awaiting_steps").$type<AwaitingSteps>(),
    /** Why the plan's server-run steps stopped, until the paused step moves on. */
    pauseReason: jsonb("pause_reason").$type<PauseReason>(),
    /** Who cancelled the plan, when and why (docs/state-machines.md, "Cancel"); null unless cancelled. */
    cancellation: jsonb("cancellation").$type<Cancellation>(),
    /** Approvals each of the plan's reviews needs at least (create_plan); null: the team's. */
    approvalsRequired: integer("approvals_required"),
    /**
     * The plan this one was forked from, and the step of it the fork starts
     * at (docs/history-and-forks.md); null on a plan made from scratch. No
     * foreign key: a fork outlives its source, and keeps naming it.
     */
    forkedFromPlanId: uuid("forked_from_plan_id"),
    forkedFromStepId: uuid("forked_from_step_id"),
  },
  (t) => [
    index("research_plan_tenant_status_idx").on(t.tenantId, t.status, t.updatedAt),
    index("research_plan_tenant_updated_idx").on(t.tenantId, t.updatedAt),
    // A plan's forks, newest first.
    index("research_plan_forked_from_idx")
      .on(t.forkedFromPlanId, t.createdAt)
      .where(sql`${t.forkedFromPlanId} is not null`),
    // The plans a deleted user or key made, whose creator is set null.
    index("research_plan_created_by_key_idx")
      .on(t.createdByKeyId)
      .where(sql`${t.createdByKeyId} is not null`),
    index("research_plan_created_by_user_idx")
      .on(t.createdByUserId)
      .where(sql`${t.createdByUserId} is not null`),
  ],
);

export type StepExecutionReport = {
  thinking: string;
  webSearches: unknown[];
  webFetches: unknown[];
  otherToolCalls: unknown[];
  subagents: unknown[];
};

export const planSteps = pgTable(
  "plan_step",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    stepOrder: integer("step_order").notNull(),
    stepType: stepType("step_type").notNull(),
    instructions: text("instructions").notNull(),
    status: stepStatus("status").notNull().default("pending"),
    result: jsonb("result"),
    resultSummary: text("result_summary"),
    confidence: doublePrecision("confidence"),
    stepExecutionReport: jsonb("step_execution_report").$type<StepExecutionReport>(),
    outputFormattingNotes: text("output_formatting_notes"),
    failureReason: text("failure_reason"),
    startedAt: timestamp("started_at", { withTimezone: true }),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    /**
     * Until when the agent that was handed this `in_progress` step holds it;
     * after that get_next_step hands it out again. Null on an `in_progress` step
     * means nobody holds it (a reviewer asked for a redo), so it is handed out next.
     */
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    /** How many times the step has been handed out. */
    attempt: integer("attempt").notNull().default(0),
    /** A server-run step: the Cairn tool that runs it, and its arguments (with bindings). */
    tool: text("tool"),
    arguments: jsonb("arguments").$type<Record<string, unknown>>(),
    /**
     * A server-run step: the `step_started` row of Cairn's latest run of it,
     * which holds the arguments it ran with, bindings resolved. Written with the
     * run (lib/services/plans/run-server-steps.ts), so the plan page finds the
     * row by its key rather than by a search of the plan's trail. No key to
     * the row: both go with their plan, and a dangling id shows nothing.
     */
    lastRunAuditId: uuid("last_run_audit_id"),
    /** An agent step's inputs (with bindings), resolved when it is handed out. */
    inputs: jsonb("inputs").$type<Record<string, unknown>>(),
    /** A JSON Schema the step's result must satisfy. */
    outputSchema: jsonb("output_schema").$type<Record<string, unknown>>(),
    /** In a fork: the source plan's step this one was carried from with its result (docs/history-and-forks.md). */
    carriedFromStepId: uuid("carried_from_step_id"),
    /**
     * The digest of the step's definition (`cairn_step_digest`: its type,
     * instructions, tool, arguments, inputs and output schema), kept by the
     * `plan_step_definition_digest` trigger whenever one of them is written,
     * so a revision lists steps by digest without reading their definitions.
     */
    definitionDigest: text("definition_digest").notNull().default(""),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // Not unique: add/remove/reorder renumber steps inside one transaction, and a
    // non-deferrable unique index would reject the intermediate states. It also
    // holds each step's tenant, id, type and status (INCLUDE, in
    // drizzle/0043_steps_status_in_plan_order_index.sql: drizzle's builder has
    // no INCLUDE), so get_plan_status reads a plan's steps from it alone.
    index("plan_step_plan_order_idx").on(t.planId, t.stepOrder),
    // The plan's open steps (OPEN_STEP_STATUSES, lib/plan-engine/states.ts) in
    // order: get_next_step claims the first free one with FOR UPDATE SKIP
    // LOCKED, and a submit asks whether any other is open, each reading from
    // the first open step on rather than every step before it.
    index("plan_step_open_idx")
      .on(t.planId, t.stepOrder)
      .where(sql`${t.status} in ('pending', 'in_progress')`),
    // A submit: does another step of the plan await a person? A few, or none.
    index("plan_step_awaiting_input_idx").on(t.planId).where(sql`${t.status} = 'awaiting_input'`),
    // Steps in progress, a plan's or all (the stall check,
    // lib/services/plans/mark-stalled-plans.ts). The only index of them: a
    // second, by team and start, was read by nothing and cost every claim an
    // entry (migration 0034).
    index("plan_step_in_progress_order_idx")
      .on(t.planId, t.stepOrder)
      .where(sql`${t.status} = 'in_progress'`),
    // A team's plans holding a failed step (the bulk fork from failure,
    // lib/services/plans/fork-failed-plans.ts): only failed steps, a few.
    index("plan_step_failed_idx").on(t.tenantId, t.planId).where(sql`${t.status} = 'failed'`),
    // The checkpoint hold (lib/services/loop/leases.ts and the guard trigger,
    // drizzle/0018_hot_path.sql): a plan's first undecided checkpoint is one
    // probe of an index that holds only those, not a walk of the plan's steps.
    index("plan_step_undecided_checkpoint_idx")
      .on(t.planId, t.stepOrder)
      .where(
        sql`${t.stepType} = 'checkpoint' and ${t.status} in ('pending', 'in_progress', 'awaiting_input')`,
      ),
  ],
);

export const planBranchingConditions = pgTable(
  "plan_branching_condition",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    afterStepId: uuid("after_step_id")
      .notNull()
      .references(() => planSteps.id, { onDelete: "cascade" }),
    /** The condition's place in the plan's list: conditions of one step run in this order. */
    position: integer("position").notNull(),
    conditionExpression: text("condition_expression").notNull(),
    ifTrueAction: text("if_true_action").notNull(),
    actionParams: jsonb("action_params").$type<Record<string, unknown>>().notNull().default({}),
    /** Set when the condition was evaluated after its step, and whether it fired, for the UI. */
    evaluatedAt: timestamp("evaluated_at", { withTimezone: true }),
    fired: boolean("fired"),
    createdAt: createdAt(),
  },
  (t) => [
    index("plan_branching_condition_step_idx").on(t.afterStepId),
    index("plan_branching_condition_plan_idx").on(t.planId),
  ],
);

/**
 * A plan's revisions (docs/history-and-forks.md): its creation is revision 1,
 * and every change to its definition (a modify_plan action, a decision that
 * changes a step, a branching action that skips steps or fails the plan, a
 * revert) the next one, written in the change's transaction
 * (lib/services/shared/revisions.ts). `steps` is the definition as it stood
 * after the change (what a revert restores); `diff` the change from the
 * revision before, with long values already cut (what the history shows).
 */
export const planRevisions = pgTable(
  "plan_revision",
  {
    id: id(),
    tenantId: tenantId(),
    planId: uuid("plan_id")
      .notNull()
      .references(() => researchPlans.id, { onDelete: "cascade" }),
    revision: integer("revision").notNull(),
    /** What made it: the modify_plan action, `created`, `review_<decision>`, a branch action, `forked`. */
    cause: text("cause").notNull(),
    rationale: text("rationale"),
    actorType: actorType("actor_type").notNull(),
    actorId: uuid("actor_id"),
    actorLabel: text("actor_label").notNull(),
    /** The plan's steps after it, in order: id, place and definition digest (`plan_step_definition`). */
    steps: jsonb("steps").$type<RevisionEntry[]>().notNull(),
    diff: jsonb("diff").$type<RevisionDiff>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("plan_revision_plan_revision_uq").on(t.planId, t.revision)],
);

/**
 * Each step definition a plan's revisions name, once per plan and digest
 * (docs/history-and-forks.md): a change writes only the definitions no
 * revision of the plan had, so its cost grows with what it changed.
 */
export const planStepDefinitions = pgTable(
  "plan_step_definition",
  {
    id: id(),
    tenantId: tenantId(),
    planId: uuid("plan_id")
      .notNull()
      .references(() => researchPlans.id, { onDelete: "cascade" }),
    digest: text("digest").notNull(),
    definition: jsonb("definition").$type<Omit<RevisionStep, "id" | "stepOrder">>().notNull(),
  },
  (t) => [
    uniqueIndex("plan_step_definition_plan_digest_uq").on(t.planId, t.digest),
    // A team's deletion cascades here by tenant: without it, a scan of every team's definitions.
    index("plan_step_definition_tenant_idx").on(t.tenantId),
  ],
);

export const planAuditLog = pgTable(
  "plan_audit_log",
  {
    id: id(),
    /**
     * A row of a plan is held to its plan, not to the tenant: the
     * `plan_audit_chain` trigger refuses one whose tenant is not its plan's,
     * and the plan's own key holds the tenant. A key to the tenant locked the
     * tenant's row on every row written, so every agent of a team took that
     * one row's lock on every hand-out and result, each lock a new
     * multixact of all the team's open transactions (docs/performance.md, "A
     * team's agents and their tenant's row").
     */
    tenantId: uuid("tenant_id").notNull(),
    /** The tenant of a row of no plan (a skill run's, an artifact's), which only this key holds. */
    tenantWithoutPlan: uuid("tenant_without_plan")
      .generatedAlwaysAs(sql`case when plan_id is null then tenant_id end`)
      .references(() => tenants.id, { onDelete: "cascade" }),
    planId: uuid("plan_id").references(() => researchPlans.id, { onDelete: "cascade" }),
    stepId: uuid("step_id"),
    eventType: auditEventType("event_type").notNull(),
    ...actor(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    /**
     * The order rows were written in, across plans. `created_at` is the
     * transaction's start, and a transaction that waited for a plan's lock
     * started before the one it waited for; within a plan, `chain_index`
     * orders its rows as its changes happened, and the chain's check reads
     * the rows that lost their place (a null `chain_index`) by this.
     */
    seq: bigint("seq", { mode: "number" }).generatedAlwaysAsIdentity(),
    /**
     * The hash chain of the plan's trail (docs/audit.md): the digest of the
     * plan's previous row, and sha256(prev_digest || canonical row). Written
     * by the `plan_audit_chain` trigger, so every writer of the trail chains;
     * null only on a row of no plan (a skill run's, an artifact's), which
     * belongs to no chain (`plan_audit_log_chained`).
     */
    chainIndex: integer("chain_index"),
    prevDigest: text("prev_digest"),
    digest: text("digest"),
  },
  (t) => [
    // Every row of a plan's trail has its place and digest: a row written past
    // the trigger is refused (migration 0020; verify-audit still reports one
    // made after this check was dropped).
    check(
      "plan_audit_log_chained",
      sql`${t.planId} is null or (${t.chainIndex} is not null and ${t.digest} is not null)`,
    ),
    // The chain's order, which is the order a plan's rows were written in
    // (the head's row lock queues its writers): one link per place, and every
    // read of a plan's trail, the checks', the export's, the plan page's and
    // its newest row for the plans page. Two more indexes of a plan's rows,
    // by time and by `seq`, cost every hand-out and result two index entries
    // (docs/performance.md, "Three indexes fewer on the trail").
    uniqueIndex("plan_audit_log_plan_chain_uq").on(t.planId, t.chainIndex),
    // A team's deletion cascades here by the rows of no plan (those of its
    // plans go with the plans): only they are in this index. No read goes by
    // the tenant and time, so no index does either: each was an entry more
    // on every hand-out and result.
    index("plan_audit_log_tenant_without_plan_idx")
      .on(t.tenantWithoutPlan)
      .where(sql`${t.tenantWithoutPlan} is not null`),
  ],
);

/**
 * The head of each plan's audit chain: how many links it has and the last
 * one's digest (docs/audit.md). The `plan_audit_chain` trigger moves it in the
 * same transaction as the row it chains, so a trail whose newest rows were
 * deleted no longer reaches it. No foreign key to the plan: the head outlives
 * a deleted plan, which `verify-audit` then reports. Its row lock also orders
 * concurrent writers of one plan's trail.
 */
export const planAuditHead = pgTable("plan_audit_head", {
  planId: uuid("plan_id").primaryKey(),
  tenantId: tenantId(),
  chainLength: integer("chain_length").notNull(),
  lastDigest: text("last_digest").notNull(),
  /**
   * The digest before `last_digest`: the trigger moves the head in one
   * update and reads the row's `prev_digest` back from it (an update's
   * RETURNING sees only the new row), so a chained row makes one version of
   * the head, not two.
   */
  prevDigest: text("prev_digest"),
});

/**
 * The newest signed head of each plan's audit chain (docs/audit.md, "Signed
 * heads"): an HMAC-SHA256, with a key the database does not hold, over the
 * tenant, the plan, `chain_length` and `head_digest`, the digest of row
 * `chain_length`. Cairn signs in the transaction of every review decision and
 * in the scheduler's passes; rows after the signed head are not yet signed. A
 * row with no key and no signature is the migration's mark of a trail written
 * before signing began (its rows up to `chain_length`). No foreign key to the
 * plan, as for the head.
 */
export const planAuditSignature = pgTable(
  "plan_audit_signature",
  {
    planId: uuid("plan_id").primaryKey(),
    tenantId: tenantId(),
    chainLength: integer("chain_length").notNull(),
    headDigest: text("head_digest").notNull(),
    /** Which key signed (lib/services/audit/audit-key.ts); null on the migration's mark. */
    keyId: text("key_id"),
    signature: text("signature"),
    signedAt: timestamp("signed_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("plan_audit_signature_key_check", sql`(${t.keyId} is null) = (${t.signature} is null)`),
  ],
);

export const reviewRequests = pgTable(
  "review_request",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    stepId: stepId(),
    summary: text("summary").notNull(),
    questions: jsonb("questions").$type<string[]>().notNull().default([]),
    /**
     * What the agent asks the person to accept; an approve completes the step
     * with it. json, not jsonb: jsonb reorders keys, and the person is shown
     * the fields in the order the agent sent them.
     */
    proposedResult: json("proposed_result").$type<Record<string, unknown>>(),
    proposedConfidence: doublePrecision("proposed_confidence"),
    /** The step's instructions when the review was requested, as the reviewer is shown them. */
    stepInstructions: text("step_instructions").notNull(),
    /** sha256 over what the reviewer is shown (lib/services/reviews/review-digest.ts). */
    contentDigest: text("content_digest").notNull(),
    status: reviewRequestStatus("status").notNull().default("pending"),
    requestedByType: actorType("requested_by_type").notNull(),
    requestedById: uuid("requested_by_id"),
    requestedByLabel: text("requested_by_label").notNull(),
    createdAt: createdAt(),
    decidedAt: timestamp("decided_at", { withTimezone: true }),
    /** When Cairn applies `on_timeout` itself; null waits forever. */
    dueAt: timestamp("due_at", { withTimezone: true }),
    onTimeout: reviewTimeoutAction("on_timeout"),
    /** The whole deadline (time and action) is the team's default, not the requester's. */
    deadlineFromTeam: boolean("deadline_from_team").notNull().default(false),
    /**
     * The action the requester set, when the policy in force (or, for an
     * approve, the checkpoint rule when it fired) replaced it with `on_timeout`.
     */
    onTimeoutReplaced: reviewTimeoutAction("on_timeout_replaced"),
    /** Set once the "due soon" notification has been queued, so it goes out once. */
    dueSoonNotifiedAt: timestamp("due_soon_notified_at", { withTimezone: true }),
    /** Set when the deadline escalated the review to the admins. */
    escalatedAt: timestamp("escalated_at", { withTimezone: true }),
    /** The person the review is assigned to; null with a null role leaves it to the team. */
    assignedUserId: uuid("assigned_user_id").references(() => users.id, {
      onDelete: "set null",
    }),
    /** A role the review is assigned to (escalation assigns to `admin`). */
    assignedRole: userRole("assigned_role"),
    /**
     * Several named people the review is assigned to (an escalation level's);
     * a review is assigned to a person, a role or such a group, at most one.
     */
    assignedUserIds: uuid("assigned_user_ids").array(),
    /** The team's escalation chain when the review was requested; null, none. */
    escalationChain: jsonb("escalation_chain").$type<EscalationLevel[]>(),
    /** How many of its chain's levels have been applied. */
    escalationLevel: integer("escalation_level").notNull().default(0),
    /** When its next level is due; null when none is left (or it has no chain). */
    escalationDueAt: timestamp("escalation_due_at", { withTimezone: true }),
    /**
     * Why the review was last escalated, as its `review_escalated` audit row
     * says (written with it, lib/services/reviews/escalation-levels.ts): what
     * get_next_step tells the agent of a deadline's escalation, read from the
     * review rather than found in the plan's trail, which grows with the plan.
     */
    escalationReason: text("escalation_reason"),
    /** Distinct people whose approval passes it (the largest of the team's, the plan's and the request's). */
    approvalsRequired: integer("approvals_required").notNull().default(1),
  },
  (t) => [
    index("review_request_plan_idx").on(t.planId, t.createdAt),
    // A step's reviews: the plan page's withdrawn flag per step shown, and the
    // rows a removed step takes with it. Without it, each was a scan of every
    // team's reviews (tests/foreign-keys-indexed.test.ts).
    index("review_request_step_idx").on(t.stepId),
    // A plan's pending reviews, a few or none: get_next_step's due-review
    // probe and every locked read of the plan's snapshot, which otherwise read
    // every review the plan has had (up to 20 a step, more at checkpoints).
    index("review_request_plan_pending_idx").on(t.planId).where(sql`${t.status} = 'pending'`),
    // The inbox: a tenant's pending reviews, oldest first.
    index("review_request_pending_idx")
      .on(t.tenantId, t.createdAt)
      .where(sql`${t.status} = 'pending'`),
    // The deadline scheduler's query: pending reviews whose deadline has come,
    // in the order a run claims them, past its last claim (due-review-claims.ts):
    // by id too, so many reviews of one deadline are not sorted at each claim.
    index("review_request_due_idx")
      .on(t.dueAt, t.id)
      .where(sql`${t.status} = 'pending' and ${t.dueAt} is not null`),
    // The scheduler's escalation step: pending reviews whose next level has come, in the same order.
    index("review_request_escalation_idx")
      .on(t.escalationDueAt, t.id)
      .where(sql`${t.status} = 'pending' and ${t.escalationDueAt} is not null`),
    // The reviews a deleted user was assigned, handed back to the team.
    index("review_request_assigned_user_idx")
      .on(t.assignedUserId)
      .where(sql`${t.assignedUserId} is not null`),
    check(
      "review_request_assignee_check",
      sql`num_nonnulls(${t.assignedUserId}, ${t.assignedRole}, ${t.assignedUserIds}) <= 1`,
    ),
  ],
);

export const reviewDecisions = pgTable(
  "review_decision",
  {
    id: id(),
    tenantId: tenantId(),
    reviewRequestId: uuid("review_request_id")
      .notNull()
      .unique()
      .references(() => reviewRequests.id, { onDelete: "cascade" }),
    planId: planId(),
    stepId: stepId(),
    decision: reviewDecision("decision").notNull(),
    feedback: text("feedback"),
    decidedByType: actorType("decided_by_type").notNull(),
    decidedById: uuid("decided_by_id"),
    decidedByLabel: text("decided_by_label").notNull(),
    /** A person in the web UI, an agent relaying one, or Cairn at a deadline. */
    channel: decisionChannel("channel").notNull(),
    /** The team's decision policy when the decision was made (null on decisions made before it was kept). */
    decisionPolicy: decisionPolicy("decision_policy"),
    /** The content digest of the review as it was decided. */
    reviewDigest: text("review_digest").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("review_decision_plan_idx").on(t.planId, t.createdAt),
    // A step's newest decision (the checkpoint guard's triggers, migration
    // 0030) and the rows a removed step takes with it, without a scan and sort
    // of every team's decisions.
    index("review_decision_step_idx").on(t.stepId, t.createdAt),
    // The inbox's recent decisions of the team, newest first.
    index("review_decision_tenant_idx").on(t.tenantId, t.createdAt, t.id),
  ],
);

/**
 * One person's approval of a review that needs several (docs/reviews.md,
 * "Quorum"): one row per person and review, bound to the digest of what they
 * approved; only rows whose digest is the review's current one count.
 */
export const reviewApprovals = pgTable(
  "review_approval",
  {
    id: id(),
    tenantId: tenantId(),
    reviewRequestId: uuid("review_request_id")
      .notNull()
      .references(() => reviewRequests.id, { onDelete: "cascade" }),
    planId: uuid("plan_id")
      .notNull()
      .references(() => researchPlans.id, { onDelete: "cascade" }),
    /** The person: the signed-in user, or the user behind the relaying credential. */
    approverId: uuid("approver_id").notNull(),
    approvedByType: actorType("approved_by_type").notNull(),
    approvedById: uuid("approved_by_id"),
    approvedByLabel: text("approved_by_label").notNull(),
    channel: decisionChannel("channel").notNull(),
    reviewDigest: text("review_digest").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("review_approval_person_idx").on(t.reviewRequestId, t.approverId),
    index("review_approval_plan_idx").on(t.planId),
  ],
);

/**
 * A reviewer's snooze of a pending review (docs/reviews.md, "Snooze"): out of
 * their own inbox until `until`, one row per review and person (a new snooze
 * replaces theirs). `returned_at` is set when it ends: the scheduler's return
 * (with its notification), an early un-snooze, or the review's decision (the
 * trigger of drizzle/0024_review_snooze.sql).
 */
export const reviewSnoozes = pgTable(
  "review_snooze",
  {
    id: id(),
    tenantId: tenantId(),
    reviewRequestId: uuid("review_request_id")
      .notNull()
      .references(() => reviewRequests.id, { onDelete: "cascade" }),
    planId: planId(),
    userId: userId(),
    until: timestamp("until", { withTimezone: true }).notNull(),
    /** The IANA zone the snoozer chose the time in (their browser's). */
    timeZone: text("time_zone").notNull(),
    createdAt: createdAt(),
    returnedAt: timestamp("returned_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("review_snooze_person_idx").on(t.reviewRequestId, t.userId),
    // The scheduler's query: snoozes still running, by when they come back.
    index("review_snooze_due_idx").on(t.until).where(sql`${t.returnedAt} is null`),
    // One person's running snoozes: the inbox's "Snoozed (n)".
    index("review_snooze_user_idx").on(t.userId, t.until).where(sql`${t.returnedAt} is null`),
    // Every snooze of a person, ended ones too: deleting the person deletes them all.
    index("review_snooze_user_all_idx").on(t.userId),
    index("review_snooze_plan_idx").on(t.planId),
  ],
);

export const mcpToolCallLog = pgTable(
  "mcp_tool_call_log",
  {
    id: id(),
    tenantId: tenantId(),
    apiKeyId: uuid("api_key_id").references(() => apiKeys.id, { onDelete: "set null" }),
    /** The connected app whose OAuth token made the call (api_key_id is then null). */
    oauthGrantId: uuid("oauth_grant_id").references(() => oauthGrants.id, { onDelete: "set null" }),
    toolName: text("tool_name").notNull(),
    durationMs: doublePrecision("duration_ms").notNull(),
    isError: boolean("is_error").notNull(),
    errorCode: text("error_code"),
    /** The error's text as the agent got it (shortened), for the admin's tool-call log. */
    errorMessage: text("error_message"),
    requestBytes: integer("request_bytes").notNull(),
    responseBytes: integer("response_bytes").notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("mcp_tool_call_log_tenant_time_idx").on(t.tenantId, t.createdAt),
    index("mcp_tool_call_log_tool_time_idx").on(t.tenantId, t.toolName, t.createdAt),
    // The calls of a deleted key or connected app, whose credential is set null:
    // without these, each one deleted was a scan of every team's log. A call
    // names one or the other, so each row is in one of the two.
    index("mcp_tool_call_log_api_key_idx").on(t.apiKeyId).where(sql`${t.apiKeyId} is not null`),
    index("mcp_tool_call_log_oauth_grant_idx")
      .on(t.oauthGrantId)
      .where(sql`${t.oauthGrantId} is not null`),
  ],
);

/** PostgreSQL's `tsvector`, which drizzle has no column builder for. */
const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

export const researchArtifacts = pgTable(
  "research_artifact",
  {
    id: id(),
    tenantId: tenantId(),
    planId: uuid("plan_id").references(() => researchPlans.id, { onDelete: "set null" }),
    stepId: uuid("step_id").references(() => planSteps.id, { onDelete: "set null" }),
    artifactType: text("artifact_type").notNull(),
    title: text("title").notNull(),
    content: jsonb("content").notNull(),
    contentText: text("content_text").notNull(),
    confidence: doublePrecision("confidence"),
    sourceUrls: jsonb("source_urls").$type<string[]>().notNull().default([]),
    createdAt: createdAt(),
    /**
     * search_sources' full-text side, kept by PostgreSQL itself so no write path
     * can forget it: the title weighs more (A) than the body (B). The `english`
     * configuration is spelled out because the generated column must be immutable.
     */
    searchVector: tsvector("search_vector")
      .notNull()
      .generatedAlwaysAs(
        sql`setweight(to_tsvector('english'::regconfig, "title"), 'A') || setweight(to_tsvector('english'::regconfig, "content_text"), 'B')`,
      ),
  },
  (t) => [
    index("research_artifact_tenant_time_idx").on(t.tenantId, t.createdAt),
    // A plan's artifacts in the order their pages and the plan page's newest
    // read them, so a page reads its rows rather than sorting all of the plan's.
    index("research_artifact_plan_idx").on(t.planId, t.createdAt, t.id),
    // A removed step's artifacts, which lose their step.
    index("research_artifact_step_idx").on(t.stepId).where(sql`${t.stepId} is not null`),
    index("research_artifact_search_idx").using("gin", t.searchVector),
    // search_sources' typo-tolerant side matches the query against titles by
    // trigram word similarity; a title is short, so the index stays small and
    // the similarity recheck cheap even with 100,000 artifacts.
    index("research_artifact_title_trgm_idx").using("gin", t.title.op("gin_trgm_ops")),
  ],
);

export const researchOutputs = pgTable(
  "research_output",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    executionId: uuid("execution_id").references(() => skillExecutions.id, {
      onDelete: "set null",
    }),
    outputMediaType: text("output_media_type").notNull(),
    content: text("content").notNull(),
    formattingNotes: text("formatting_notes"),
    /** What its citations name, checked against the plan's sources when it was stored (docs/evidence.md). */
    citationCheck: jsonb("citation_check").$type<CitationCheck>(),
    createdAt: createdAt(),
  },
  (t) => [
    index("research_output_plan_idx").on(t.planId, t.createdAt),
    index("research_output_execution_idx")
      .on(t.executionId)
      .where(sql`${t.executionId} is not null`),
  ],
);

/** A citation of a plan source by a claim (docs/evidence.md). */
export type ClaimCitation = { sourceKey: string; quote: string | null; locator: string | null };

/**
 * A page, DOI or arXiv paper a plan read, once per canonical key
 * (docs/evidence.md): when it was first read, by which step, what the agent
 * extracted and, when reported, a digest of the text it read.
 */
export const planSources = pgTable(
  "plan_source",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    canonicalKey: text("canonical_key").notNull(),
    kind: text("kind").$type<SourceKind>().notNull(),
    href: text("href").notNull(),
    title: text("title"),
    extract: text("extract"),
    contentDigest: text("content_digest"),
    firstStepId: uuid("first_step_id").references(() => planSteps.id, { onDelete: "set null" }),
    firstReadAt: timestamp("first_read_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    uniqueIndex("plan_source_plan_key_uq").on(t.planId, t.canonicalKey),
    // A removed step's sources, which lose their first step.
    index("plan_source_first_step_idx").on(t.firstStepId).where(sql`${t.firstStepId} is not null`),
  ],
);

/** A claim a step makes, with the plan sources that support and contradict it (docs/evidence.md). */
export const stepClaims = pgTable(
  "step_claim",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    stepId: stepId(),
    position: integer("position").notNull(),
    text: text("text").notNull(),
    /** One of the plan's key claims: a deliverable should cite a source for it. */
    keyClaim: boolean("key_claim").notNull().default(false),
    supports: jsonb("supports").$type<ClaimCitation[]>().notNull(),
    contradicts: jsonb("contradicts").$type<ClaimCitation[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index("step_claim_plan_step_idx").on(t.planId, t.stepId, t.position),
    // A removed step's claims, which go with it: the index above leads with the plan.
    index("step_claim_step_idx").on(t.stepId),
  ],
);

export const researchFeedback = pgTable(
  "research_feedback",
  {
    id: id(),
    tenantId: tenantId(),
    planId: planId(),
    executionId: uuid("execution_id").references(() => skillExecutions.id, {
      onDelete: "set null",
    }),
    feedbackType: feedbackType("feedback_type").notNull(),
    satisfaction: integer("satisfaction").notNull(),
    summary: text("summary").notNull(),
    improvementSuggestions: text("improvement_suggestions"),
    followUpRequested: boolean("follow_up_requested").notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    index("research_feedback_plan_idx").on(t.planId, t.createdAt),
    index("research_feedback_execution_idx")
      .on(t.executionId)
      .where(sql`${t.executionId} is not null`),
  ],
);

/**
 * The notification outbox: one row per event, written in the transaction of the
 * change that caused it, so a crash loses none and a rolled-back change sends
 * none. The dispatcher fans each event out to webhook and e-mail deliveries.
 */
export const notificationEvents = pgTable(
  "notification_event",
  {
    id: id(),
    tenantId: tenantId(),
    /** An event's name: its facts and the names there are, lib/services/notifications/events.ts. */
    event: text("event").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    /** Set once its deliveries have been written. */
    dispatchedAt: timestamp("dispatched_at", { withTimezone: true }),
  },
  (t) => [
    index("notification_event_undispatched_idx")
      .on(t.createdAt)
      .where(sql`${t.dispatchedAt} is null`),
  ],
);

export const webhookEndpoints = pgTable(
  "webhook_endpoint",
  {
    id: id(),
    tenantId: tenantId(),
    url: text("url").notNull(),
    description: text("description"),
    /** The names of the events it subscribes to (lib/services/notifications/events.ts). */
    events: jsonb("events").$type<string[]>().notNull(),
    /** The HMAC-SHA256 signing secret; shown to the admin once, kept to sign. */
    secret: text("secret").notNull(),
    createdAt: createdAt(),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
  },
  (t) => [index("webhook_endpoint_tenant_idx").on(t.tenantId)],
);

export const webhookDeliveries = pgTable(
  "webhook_delivery",
  {
    id: id(),
    tenantId: tenantId(),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: uuid("event_id")
      .notNull()
      .references(() => notificationEvents.id, { onDelete: "cascade" }),
    status: deliveryStatus("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: createdAt(),
    deliveredAt: timestamp("delivered_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("webhook_delivery_event_endpoint_uq").on(t.eventId, t.endpointId),
    index("webhook_delivery_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("webhook_delivery_endpoint_time_idx").on(t.endpointId, t.createdAt),
  ],
);

export const emailDeliveries = pgTable(
  "email_delivery",
  {
    id: id(),
    tenantId: tenantId(),
    eventId: uuid("event_id")
      .notNull()
      .references(() => notificationEvents.id, { onDelete: "cascade" }),
    userId: uuid("user_id").references(() => users.id, { onDelete: "set null" }),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    body: text("body").notNull(),
    status: deliveryStatus("status").notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull().defaultNow(),
    lastError: text("last_error"),
    createdAt: createdAt(),
    sentAt: timestamp("sent_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("email_delivery_event_user_uq").on(t.eventId, t.toAddress),
    index("email_delivery_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("email_delivery_user_idx").on(t.userId).where(sql`${t.userId} is not null`),
  ],
);
