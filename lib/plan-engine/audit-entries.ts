/**
 * The audit entries the engine decides and the services write, typed per event
 * type (the payload of each `plan_audit_log` row). Every step transition has
 * its row: pending -> in_progress `step_started`; -> completed `step_completed`
 * (or, from a review, `user_reviewed` with the decision); -> failed
 * `step_failed`; pending -> skipped `plan_modified` (branch) or `user_reviewed`
 * (skip); in_progress -> awaiting_input `user_reviewed` (review_requested);
 * failed -> pending `plan_modified` (retry_step).
 */
import type { DecisionChannel, DecisionPolicy, ReviewDecision } from "./states";

export type PlanModifiedAction =
  | "created"
  | "add_steps"
  | "remove_step"
  | "reorder_steps"
  | "update_step_instructions"
  | "fail_step"
  | "retry_step"
  | "branch_skipped_steps"
  | "branch_failed_plan"
  | "stall_detected"
  | "decline_add_steps"
  | "revert_revision"
  | "forked"
  | "fork_made"
  | "cancelled";

export type AuditEntry =
  | {
      eventType: "step_started";
      planId: string;
      stepId: string;
      payload: {
        stepOrder: number;
        planStatusBefore: string;
        /** 1 for the first hand-out; more when the step is handed out again. */
        attempt: number;
        /** Why an in-progress step was handed out again; absent on a first start. */
        reissued?: "lease_expired" | "redo_requested";
        /** Started by submit_step_result on a step still pending (no hand-out). */
        autoStarted?: boolean;
        /** A server-run step: the tool Cairn ran, and its resolved arguments. */
        tool?: string;
        arguments?: unknown;
      };
    }
  | {
      eventType: "step_completed";
      planId: string;
      stepId: string;
      payload: {
        stepOrder: number;
        confidence: number | null;
        resultSummary: string | null;
        /** The step was still pending: the timing edge case of docs/execution-loop.md. */
        autoStarted: boolean;
        tool?: string;
      };
    }
  | {
      eventType: "step_failed";
      planId: string;
      stepId: string;
      payload: {
        stepOrder: number;
        reason: string;
        source: "fail_step" | "review_reject" | "server_tool";
        tool?: string;
        errorCode?: string;
      };
    }
  | {
      eventType: "plan_modified";
      planId: string;
      stepId?: string;
      payload: { action: PlanModifiedAction; modificationRationale?: string } & Record<
        string,
        unknown
      >;
    }
  | {
      eventType: "user_reviewed";
      planId: string;
      stepId: string;
      payload:
        | {
            action: "review_requested";
            reviewRequestId: string;
            summary: string;
            questions: string[];
            proposedResult?: Record<string, unknown>;
            proposedConfidence?: number;
            contentDigest: string;
            dueAt?: string;
            onTimeout?: string;
            assignedUserId?: string;
            assignedRole?: string;
            /** Set when more than one person's approval is needed (docs/reviews.md, "Quorum"). */
            approvalsRequired?: number;
          }
        | { action: "review_withdrawn"; reviewRequestId: string; reason: string }
        | {
            /** Taken, handed off or returned to the team (assignedUserId and assignedRole null). */
            action: "review_assigned";
            reviewRequestId: string;
            assignedUserId: string | null;
            assignedUserEmail: string | null;
            assignedRole: string | null;
            /** Handed to a colleague by someone else, with their note (docs/reviews.md, "Hand-over"). */
            handedOver?: true;
            note?: string | null;
          }
        | {
            /** Out of the acting person's inbox until `until` (docs/reviews.md, "Snooze"). */
            action: "review_snoozed";
            reviewRequestId: string;
            until: string;
            /** The zone the person chose the time in. */
            timeZone: string;
          }
        | {
            /** Back in the person's inbox: they un-snoozed it early (by them), or its time came (by Cairn). */
            action: "review_unsnoozed" | "snooze_returned";
            reviewRequestId: string;
            snoozedUserId: string;
            until: string;
          }
        | {
            /**
             * Handed on because nobody answered in time: by the deadline's
             * escalate (to the admins, no `level`), or by a level of the
             * escalation chain (`level`, 1-based). Whom to: the role or the
             * people (docs/reviews.md, "Escalation chains").
             */
            action: "review_escalated";
            reviewRequestId: string;
            reason: string;
            level?: number;
            assignedRole?: string | null;
            assignedUserIds?: string[];
            assignedUserEmails?: string[];
          }
        | {
            /**
             * A policy in force forbade the deadline's action (timeoutActionInForce), or the
             * checkpoint rule refused its approve (timeoutActionNotHeld): what ran instead.
             */
            action: "deadline_action_replaced";
            reviewRequestId: string;
            from: string;
            to: string;
            reason: string;
            decisionPolicy: DecisionPolicy;
          }
        | {
            /**
             * One person's approval of a review that needs several (docs/reviews.md,
             * "Quorum"): counted, the review still waits for the rest.
             */
            action: "approval_recorded";
            reviewRequestId: string;
            /** The digest of what this person approved: only approvals of the current content count. */
            reviewDigest: string;
            channel: DecisionChannel;
            decisionPolicy: DecisionPolicy;
            approvals: number;
            approvalsRequired: number;
          }
        | {
            action: "decision";
            reviewRequestId: string;
            decision: ReviewDecision;
            feedback: string | null;
            /** How it reached Cairn: web (a person), relayed (an agent), deadline (Cairn). */
            channel: DecisionChannel;
            /** The digest of what the reviewer was shown (review_request.content_digest). */
            reviewDigest: string;
            /** The team's rule on who decides when the decision was made. */
            decisionPolicy: DecisionPolicy;
            /** The result the decider entered for a review with no proposal. */
            enteredResult?: Record<string, unknown>;
            /** An approve of a review that needed several approvals: who approved, this decider last. */
            approvedBy?: string[];
          };
    }
  | {
      eventType: "evidence_recorded";
      planId: string;
      stepId: string | null;
      payload: {
        /** With the step's result, added to a completed step (add_step_evidence), or an artifact's sources. */
        origin: "step_result" | "added" | "artifact";
        stepOrder: number | null;
        /** The canonical keys of the sources the plan read for the first time. */
        newSources: string[];
        /** The claims recorded, with their status when recorded and the keys they cite. */
        claims: { text: string; status: string; supports: string[]; contradicts: string[] }[];
        artifactId?: string;
      };
    }
  | {
      eventType: "output_stored";
      planId: string;
      payload: {
        outputId: string;
        outputMediaType: string;
        /** sha256 of the deliverable as stored: the trail binds the text the plan delivered. */
        contentSha256: string;
        contentLength: number;
        citations: number;
        notRead: number;
      };
    }
  | { eventType: "session_resumed"; planId: string; payload: { sessionId: string | null } }
  | {
      eventType: "skill_started" | "skill_completed";
      planId: string | null;
      payload: { executionId: string; skillName: string; status: string } & Record<string, unknown>;
    };

/** The row of a pending review withdrawn because its plan ended (cancelled, completed or failed). */
export function reviewWithdrawnEntry(
  planId: string,
  review: { id: string; stepId: string },
  reason: string,
): AuditEntry {
  return {
    eventType: "user_reviewed",
    planId,
    stepId: review.stepId,
    payload: { action: "review_withdrawn", reviewRequestId: review.id, reason },
  };
}

/** The row of a failed step put back to pending (retry_step, or an agent's result for a server-run step whose tool failed). */
export function retryStepEntry(
  planId: string,
  stepId: string,
  payload: { modificationRationale: string } & Record<string, unknown>,
): AuditEntry {
  return {
    eventType: "plan_modified",
    planId,
    stepId,
    payload: { action: "retry_step", ...payload },
  };
}
