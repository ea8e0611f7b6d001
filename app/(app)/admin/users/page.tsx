import type { Metadata } from "next";
import { headers } from "next/headers";
import { ConnectedAppsTable } from "@/app/_components/connected-apps";
import { Time } from "@/app/_components/time";
import { requireAdmin, userContext } from "@/lib/auth/session";
import { oauthUrls, publicOrigin } from "@/lib/oauth/config";
import { listConnectedApps } from "@/lib/services/accounts/connected-apps";
import { publicBaseUrl } from "@/lib/services/shared/public-url";
import { views } from "@/lib/web/views";
import { revokeAppAction } from "./actions";
import { CreateKeyForm, CreateUserForm, RevokeKeyForm, UsersTable } from "./forms";

/** As <Time> shows it, for the client-side users table. */
function formatTime(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export const metadata: Metadata = { title: "Users and API keys" };

/** The MCP URL to give AI platforms: the public origin's, as the connect page and the OAuth metadata say. */
async function mcpEndpoint(): Promise<string> {
  return oauthUrls(publicOrigin(await headers()) ?? publicBaseUrl()).resource;
}

export default async function UsersPage({
  searchParams,
}: {
  searchParams: Promise<{ welcome?: string }>;
}) {
  const admin = await requireAdmin();
  const { welcome } = await searchParams;
  const ctx = await userContext(admin);
  const [users, keys, endpoint, apps] = await Promise.all([
    views.users(admin),
    views.apiKeys(admin),
    mcpEndpoint(),
    listConnectedApps(ctx),
  ]);
  return (
    <section>
      <h1>Users and API keys</h1>
      {welcome === "1" ? (
        // The first page a new install's admin sees: what to do next.
        <p role="status" className="notice notice-success" data-testid="welcome">
          Cairn is set up and you are its first admin. Next: create an API key below for your AI
          platform (or connect one by OAuth, see Connect), and add the researchers of your team.
        </p>
      ) : null}
      <div className="two-col">
        <CreateUserForm />
        <CreateKeyForm
          users={users.filter((user) => !user.disabledAt).map(({ email }) => ({ email }))}
          endpoint={endpoint}
        />
      </div>
      <h2>Users</h2>
      <UsersTable
        selfId={admin.userId}
        users={users.map((user) => ({
          userId: user.userId,
          email: user.email,
          name: user.name,
          role: user.role,
          since: formatTime(user.createdAt),
          disabled: user.disabledAt !== null,
        }))}
      />
      <h2>API keys</h2>
      {keys.length === 0 ? (
        <p className="empty card">No keys yet. Create one above to connect an AI platform.</p>
      ) : (
        <div className="table-wrap">
          <table className="table" data-testid="api-keys">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Key</th>
                <th scope="col">User</th>
                <th scope="col">Last used</th>
                <th scope="col">Status</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.apiKeyId}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.keyPrefix}…</code>
                  </td>
                  <td>{key.email}</td>
                  <td>
                    <Time iso={key.lastUsedAt?.toISOString() ?? null} />
                  </td>
                  <td>
                    {key.revokedAt ? (
                      <span className="muted">
                        Revoked <Time iso={key.revokedAt.toISOString()} />
                      </span>
                    ) : key.userDisabledAt ? (
                      <span className="muted">Refused while its user is disabled</span>
                    ) : (
                      <RevokeKeyForm apiKeyId={key.apiKeyId} name={key.name} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Connected apps</h2>
      <p className="muted">
        AI platforms connected through OAuth (Claude.ai, ChatGPT): each acts as the user who
        approved it. Revoking one stops its tokens at once; disabling its user does too.
      </p>
      <ConnectedAppsTable apps={apps} revoke={revokeAppAction} showUser />
    </section>
  );
}
