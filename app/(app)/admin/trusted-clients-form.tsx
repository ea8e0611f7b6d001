"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import type { DecisionPolicy } from "@/lib/plan-engine/states";
import type { TeamClient } from "@/lib/services/reviews/trusted-clients";
import { IDLE } from "@/lib/web/action-state";
import { setTrustedClientsAction } from "./trusted-clients-actions";

/**
 * Which connected apps' decisions (in Cairn's review card, in an in-client
 * form) count as their person's: no list, or only the ticked ones. Each app
 * says whether it counts now, under the team's policy, by the engine's rule
 * (the view's `countsAsPerson`). A listed client whose grants are gone is
 * still shown, so a save keeps it unless it is unticked.
 */
export function TrustedClientsForm({
  decisionPolicy,
  trustedClients,
  teamClients,
}: {
  decisionPolicy: DecisionPolicy;
  trustedClients: string[] | null;
  teamClients: (TeamClient & { countsAsPerson: boolean })[];
}) {
  const [state, action] = useActionState(setTrustedClientsAction, IDLE);
  const known = new Set(teamClients.map((client) => client.clientId));
  const clients = [
    ...teamClients.map((client) => ({ ...client, connected: true })),
    ...(trustedClients ?? [])
      .filter((clientId) => !known.has(clientId))
      .map((clientId) => ({ clientId, clientName: null, connected: false, countsAsPerson: true })),
  ];
  return (
    <form action={action} className="form" data-testid="trusted-clients-form">
      <fieldset>
        <legend>Decisions in a connected app count as the person's from</legend>
        <label>
          <input type="radio" name="trust" value="every" defaultChecked={trustedClients === null} />{" "}
          No app named: every connected app people authorized in Cairn where agents may relay, none
          where only people decide
        </label>
        <label>
          <input type="radio" name="trust" value="only" defaultChecked={trustedClients !== null} />{" "}
          Only these apps:
        </label>
        {clients.length === 0 ? (
          <p className="muted" data-testid="trusted-clients-none">
            No one in the team has connected an app yet.
          </p>
        ) : (
          <ul className="plain" data-testid="trusted-clients-list">
            {clients.map((client) => (
              <li key={client.clientId} data-testid="trusted-client">
                <label>
                  <input
                    type="checkbox"
                    name="clientIds"
                    value={client.clientId}
                    defaultChecked={trustedClients?.includes(client.clientId) ?? false}
                  />{" "}
                  {client.clientName ?? "(no name)"} <code>{client.clientId}</code>
                  {client.connected ? null : <span className="muted"> (no longer connected)</span>}
                </label>{" "}
                <span
                  className={client.countsAsPerson ? "badge" : "badge muted"}
                  data-testid="trusted-client-counts"
                >
                  {client.countsAsPerson
                    ? "counts as its person in cards and in-client answers"
                    : decisionPolicy === "people_only"
                      ? "does not count as a person: its decisions in cards are refused"
                      : "does not count as a person: its decisions are recorded as relayed"}
                </span>
              </li>
            ))}
          </ul>
        )}
      </fieldset>
      <ActionMessage state={state} />
      <SubmitButton className="button button-primary">Save trusted apps</SubmitButton>
    </form>
  );
}
