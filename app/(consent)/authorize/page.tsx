/**
 * The OAuth authorization endpoint and consent page (docs/oauth.md). An AI
 * platform sends the person here; the request is checked first (an unknown
 * client, a redirect URI it did not register or any other fault gets an error
 * here and is never redirected to: see AuthorizeCheck), then the person signs in with their Cairn account if needed
 * and sees who asks, for which account, to do what, and approves or denies.
 */
import type { Metadata } from "next";
import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { currentUser, userContext } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { publicOrigin } from "@/lib/oauth/config";
import { authorizeParamsOf, checkAuthorizationRequest } from "@/lib/oauth/endpoints";
import { tenantName } from "@/lib/services/accounts/connected-apps";
import { requestClientAddress } from "@/lib/web/request";
import { ConsentForm } from "./consent-form";

export const metadata: Metadata = { title: "Connect an app" };
export const dynamic = "force-dynamic";

function queryOf(search: Record<string, string | string[] | undefined>): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(search)) {
    // A repeated parameter is ambiguous (RFC 6749 §3.1): only single values are kept.
    if (typeof value === "string") query.set(name, value);
  }
  return query;
}

function Refused({ message }: { message: string }) {
  return (
    <section className="narrow">
      <h1>This app cannot connect</h1>
      <p className="card" role="alert" data-testid="authorize-error">
        {message}
      </p>
    </section>
  );
}

export default async function AuthorizePage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const query = queryOf(await searchParams);
  const origin = publicOrigin(await headers());
  if (!origin) {
    return <Refused message="This address is not one of this Cairn server's addresses." />;
  }
  const db = await getDb();
  const check = await checkAuthorizationRequest(db, origin, authorizeParamsOf(query), {
    address: await requestClientAddress(),
  });
  if (check.kind === "page_error") return <Refused message={check.message} />;

  const user = await currentUser();
  if (!user) redirect(`/sign-in?callbackUrl=${encodeURIComponent(`/authorize?${query}`)}`);
  const team = await tenantName(await userContext(user));
  const redirectHost = new URL(check.redirectUri).host || check.redirectUri;
  const fromDocument = check.client.kind === "metadata_document";
  return (
    <section className="narrow">
      <h1>Connect an app to Cairn</h1>
      <div className="card" data-testid="consent">
        <p>
          An app calling itself{" "}
          <strong data-testid="consent-client">{check.client.clientName ?? "(no name)"}</strong>{" "}
          <span className="muted">(name not verified)</span> asks to use Cairn as you.
        </p>
        <dl>
          <dt>Sends you back to</dt>
          <dd>
            <code data-testid="consent-redirect-host">{redirectHost}</code>
          </dd>
          {fromDocument ? (
            <>
              <dt>Client described at</dt>
              <dd>
                <code>{check.client.clientId}</code>
              </dd>
            </>
          ) : null}
          <dt>Account</dt>
          <dd data-testid="consent-account">
            {user.email} in team {team}
          </dd>
        </dl>
        <p>If you approve, it will be able to do everything your API key could over MCP:</p>
        <ul>
          <li>read, create and change your team&apos;s research plans, steps and reviews;</li>
          <li>store and search research artifacts of your team;</li>
          <li>act as you in the audit trail, as this app, until you revoke it.</li>
        </ul>
        <p className="muted">
          You can revoke it at any time under Account (an admin, under Users &amp; keys). Only
          approve apps you started connecting yourself.
        </p>
        <ConsentForm params={Object.fromEntries(query.entries())} />
      </div>
    </section>
  );
}
