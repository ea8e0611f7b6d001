import type { Metadata } from "next";
import { requireAdmin } from "@/lib/auth/session";
import { EVENTS, NOTIFICATION_EVENTS } from "@/lib/services/notifications/events";
import { views } from "@/lib/web/views";
import { DeliveriesTable, EndpointsTable, RegisterWebhookForm } from "./forms";

export const metadata: Metadata = { title: "Webhooks and e-mail" };

/** As <Time> shows it, for the client-side tables. */
function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export default async function WebhooksPage() {
  const admin = await requireAdmin();
  const view = await views.webhooks(admin);
  return (
    <section>
      <h1>Webhooks and e-mail</h1>
      <p className="muted">
        Cairn POSTs signed JSON to these endpoints when reviews are requested, due or timed out and
        when plans stall, complete, fail or are cancelled. How to verify a delivery:
        docs/notifications.md.
      </p>
      <p data-testid="email-status">
        {view.emailVia
          ? `E-mail is on via ${view.emailVia}: reviewers get review e-mails, and whoever started a plan hears when it is cancelled, unless they turned e-mails off on their account page.`
          : "E-mail is off: set CAIRN_SMTP_URL and CAIRN_MAIL_FROM to send review e-mails."}
      </p>
      <p data-testid="private-webhooks-status">
        {view.privateAllowed
          ? "This server's operator lets webhooks reach some private networks (and use http://): CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES."
          : "Webhooks go to public https:// addresses only; private networks are the server operator's to allow (CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES)."}
      </p>
      <RegisterWebhookForm
        privateAllowed={view.privateAllowed}
        events={NOTIFICATION_EVENTS.map((event) => ({
          event,
          label: EVENTS[event].label,
        }))}
      />
      <h2>Endpoints</h2>
      {view.endpoints.length === 0 ? (
        <p className="empty card">No endpoints yet.</p>
      ) : (
        <EndpointsTable
          endpoints={view.endpoints.map((endpoint) => ({
            id: endpoint.id,
            url: endpoint.url,
            description: endpoint.description,
            events: endpoint.events,
            since: formatTime(endpoint.createdAt),
            disabled: endpoint.disabled,
          }))}
        />
      )}
      <h2>Recent deliveries</h2>
      {view.deliveries.length === 0 ? (
        <p className="empty card">No deliveries yet.</p>
      ) : (
        <DeliveriesTable
          deliveries={view.deliveries.map((delivery) => ({
            id: delivery.id,
            endpointUrl: delivery.endpointUrl,
            event: delivery.event,
            status: delivery.status,
            attempts: delivery.attempts,
            lastStatusCode: delivery.lastStatusCode,
            lastError: delivery.lastError,
            created: formatTime(delivery.createdAt),
            detail:
              delivery.status === "delivered" && delivery.deliveredAt
                ? `at ${formatTime(delivery.deliveredAt)}`
                : delivery.status === "pending"
                  ? `next attempt ${formatTime(delivery.nextAttemptAt)}`
                  : "given up",
          }))}
        />
      )}
    </section>
  );
}
