"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { manageWebhookAction, registerWebhookAction, resendDeliveryAction } from "./actions";

/** `events`: those an endpoint can subscribe to, as the form names them (their facts' labels). */
export function RegisterWebhookForm({
  privateAllowed,
  events,
}: {
  privateAllowed: boolean;
  events: { event: string; label: string }[];
}) {
  const [state, action] = useActionState(registerWebhookAction, IDLE);
  const secret = state.status === "success" ? state.data?.secret : undefined;
  return (
    <form action={action} className="form card" aria-labelledby="register-webhook-heading">
      <h2 id="register-webhook-heading">Register an endpoint</h2>
      <label>
        URL
        <input
          name="url"
          type="url"
          required
          placeholder="https://example.com/cairn-webhook"
          pattern={privateAllowed ? "https?://.+" : "https://.+"}
        />
      </label>
      <label>
        Description <span className="muted">(optional)</span>
        <input name="description" maxLength={200} />
      </label>
      <fieldset className="actions">
        <legend>Events</legend>
        {events.map(({ event, label }) => (
          <label key={event} className="check">
            <input type="checkbox" name="events" value={event} defaultChecked />
            {label}
          </label>
        ))}
      </fieldset>
      <ActionMessage state={state} />
      {secret ? (
        <div className="new-key" data-testid="new-webhook-secret">
          <strong>Signing secret</strong>
          <pre>
            <code data-testid="new-webhook-secret-value">{secret}</code>
          </pre>
        </div>
      ) : null}
      <SubmitButton className="button button-primary">Register endpoint</SubmitButton>
    </form>
  );
}

export type EndpointRow = {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  since: string;
  disabled: boolean;
};

/** The endpoints with their buttons, in one form so its message stays when a row goes. */
export function EndpointsTable({ endpoints }: { endpoints: EndpointRow[] }) {
  const [state, action] = useActionState(manageWebhookAction, IDLE);
  return (
    <form action={action} data-testid="webhook-endpoints">
      <ActionMessage state={state} />
      <div className="table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Since</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <code>{endpoint.url}</code>
                  {endpoint.description ? (
                    <div className="muted">{endpoint.description}</div>
                  ) : null}
                </td>
                <td>{endpoint.events.join(", ")}</td>
                <td>{endpoint.since}</td>
                <td>{endpoint.disabled ? "Disabled" : "Active"}</td>
                <td className="actions">
                  <SubmitButton
                    name="op"
                    value={`${endpoint.disabled ? "enable" : "disable"}:${endpoint.id}`}
                  >
                    {endpoint.disabled ? "Enable" : "Disable"}
                  </SubmitButton>
                  <SubmitButton
                    className="button button-danger-outline"
                    name="op"
                    value={`delete:${endpoint.id}`}
                  >
                    Delete<span className="sr-only"> {endpoint.url}</span>
                  </SubmitButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </form>
  );
}

export type DeliveryRow = {
  id: string;
  endpointUrl: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  created: string;
  detail: string;
};

export function DeliveriesTable({ deliveries }: { deliveries: DeliveryRow[] }) {
  const [state, action] = useActionState(resendDeliveryAction, IDLE);
  return (
    <form action={action} data-testid="webhook-deliveries">
      <ActionMessage state={state} />
      <div className="table-wrap">
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Event</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Resend</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.map((delivery) => (
              <tr key={delivery.id} data-testid="webhook-delivery">
                <td>{delivery.created}</td>
                <td>{delivery.event}</td>
                <td>
                  <code>{delivery.endpointUrl}</code>
                </td>
                <td data-testid="webhook-delivery-status">
                  {delivery.status}
                  <div className="muted">{delivery.detail}</div>
                </td>
                <td data-testid="webhook-delivery-attempts">{delivery.attempts}</td>
                <td>
                  {delivery.lastStatusCode !== null ? `HTTP ${delivery.lastStatusCode}` : null}
                  {delivery.lastError ? <div className="muted">{delivery.lastError}</div> : null}
                </td>
                <td>
                  <SubmitButton name="deliveryId" value={delivery.id}>
                    Resend<span className="sr-only"> {delivery.event}</span>
                  </SubmitButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </form>
  );
}
