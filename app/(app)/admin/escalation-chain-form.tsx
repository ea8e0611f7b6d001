"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { MAX_ESCALATION_LEVELS } from "@/lib/plan-engine/review-deadlines";
import type { EscalationLevelView } from "@/lib/services/reviews/escalation-chain";
import { IDLE } from "@/lib/web/action-state";
import { setEscalationChainAction } from "./escalation-chain-actions";

/**
 * The team's escalation chain (docs/reviews.md, "Escalation chains"): one row
 * per level, up to five; the rows left empty are no levels.
 */
export function EscalationChainForm({ levels }: { levels: EscalationLevelView[] | null }) {
  const [state, action] = useActionState(setEscalationChainAction, IDLE);
  const rows = Array.from({ length: MAX_ESCALATION_LEVELS }, (_, index) => levels?.[index]);
  return (
    <form action={action} className="form" data-testid="escalation-chain">
      <table>
        <thead>
          <tr>
            <th scope="col">Level</th>
            <th scope="col">After (minutes)</th>
            <th scope="col">Counted from</th>
            <th scope="col">Hand the review to</th>
            <th scope="col">People (e-mails, comma-separated)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((level, index) => {
            const n = index + 1;
            return (
              // biome-ignore lint/suspicious/noArrayIndexKey: a slot's index is its identity
              <tr key={index} data-testid={`escalation-level-${n}`}>
                <th scope="row">{n}</th>
                <td>
                  <input
                    name="afterMinutes"
                    inputMode="numeric"
                    aria-label={`Level ${n}: minutes`}
                    defaultValue={level ? String(Math.round(level.afterSeconds / 60)) : ""}
                  />
                </td>
                <td>
                  <select
                    name="from"
                    aria-label={`Level ${n}: counted from`}
                    defaultValue={n === 1 ? "request" : (level?.from ?? "previous")}
                  >
                    {n === 1 ? null : <option value="previous">the level before</option>}
                    <option value="request">the request</option>
                  </select>
                </td>
                <td>
                  <select
                    name="to"
                    aria-label={`Level ${n}: hand to`}
                    defaultValue={level && level.to !== "admins" ? "people" : "admins"}
                  >
                    <option value="admins">the admins</option>
                    <option value="people">these people</option>
                  </select>
                </td>
                <td>
                  <input
                    name="people"
                    aria-label={`Level ${n}: people`}
                    defaultValue={level && level.to !== "admins" ? level.to.people.join(", ") : ""}
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <ActionMessage state={state} />
      <SubmitButton className="button button-primary">Save escalation chain</SubmitButton>
    </form>
  );
}
