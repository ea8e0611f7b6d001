"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import type { TeamClient } from "@/lib/services/reviews/trusted-clients";
import { IDLE } from "@/lib/web/action-state";
import { setTrustedClientsAction } from "./trusted-clients-actions";

/**
 * Whose in-client answers count: every connected app, or only the ticked ones.
 * A listed client whose grants are gone is still shown, so a save keeps it
 * unless it is unticked.
 */
export function TrustedClientsForm({
  trustedClients,
  teamClients,
}: {
  trustedClients: string[] | null;
  teamClients: TeamClient[];
}) {
  const [state, action] = useActionState(setTrustedClientsAction, IDLE);
  const known = new Set(teamClients.map((client) => client.clientId));
  const clients = [
    ...teamClients.map((client) => ({ ...client, connected: true })),
    ...(trustedClients ?? [])
      .filter((clientId) => !known.has(clientId))
      .map((clientId) => ({ clientId, clientName: null, connected: false })),
  ];
  return (
    <form action={action} className="form" data-testid="trusted-clients-form">
      <fieldset>
        <legend>In-client answers count from</legend>
        <label>
          <input type="radio" name="trust" value="every" defaultChecked={trustedClients === null} />{" "}
          Every connected app people authorized in Cairn
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
              <li key={client.clientId}>
                <label>
                  <input
                    type="checkbox"
                    name="clientIds"
                    value={client.clientId}
                    defaultChecked={trustedClients?.includes(client.clientId) ?? false}
                  />{" "}
                  {client.clientName ?? "(no name)"} <code>{client.clientId}</code>
                  {client.connected ? null : <span className="muted"> (no longer connected)</span>}
                </label>
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
