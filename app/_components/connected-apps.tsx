import type { ConnectedApp } from "@/lib/services/accounts/connected-apps";
import type { ActionState } from "@/lib/web/action-state";
import { RevokeAppForm } from "./revoke-app-form";
import { Time } from "./time";

/**
 * Apps connected through OAuth (the consent page), with who approved them, their
 * first and last use, and a button that stops their tokens at once. Client names
 * are the clients' own unverified claims, shown as plain text.
 */
export function ConnectedAppsTable({
  apps,
  revoke,
  showUser,
}: {
  apps: ConnectedApp[];
  revoke: (state: ActionState, form: FormData) => Promise<ActionState>;
  showUser: boolean;
}) {
  if (apps.length === 0) {
    return (
      <p className="empty card" data-testid="connected-apps-empty">
        No connected apps. An AI platform appears here once someone approves it on Cairn&apos;s
        consent page.
      </p>
    );
  }
  return (
    <div className="table-wrap">
      <table className="table" data-testid="connected-apps">
        <thead>
          <tr>
            <th scope="col">App (unverified name)</th>
            {showUser ? <th scope="col">User</th> : null}
            <th scope="col">Approved</th>
            <th scope="col">First used</th>
            <th scope="col">Last used</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {apps.map((app) => {
            const name = app.clientName ?? app.clientId;
            return (
              <tr key={app.grantId}>
                <td>
                  {name}
                  <div className="muted">
                    <code>{app.clientId}</code>
                  </div>
                </td>
                {showUser ? <td>{app.email}</td> : null}
                <td>
                  <Time iso={app.createdAt.toISOString()} />
                </td>
                <td>
                  <Time iso={app.firstUsedAt?.toISOString() ?? null} />
                </td>
                <td>
                  <Time iso={app.lastUsedAt?.toISOString() ?? null} />
                </td>
                <td>
                  {app.revokedAt ? (
                    <span className="muted">
                      Revoked <Time iso={app.revokedAt.toISOString()} />
                    </span>
                  ) : app.userDisabledAt ? (
                    <span className="muted">Refused while its user is disabled</span>
                  ) : (
                    <RevokeAppForm grantId={app.grantId} name={name} action={revoke} />
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
