import type { Metadata } from "next";
import { headers } from "next/headers";
import { oauthUrls, publicOrigin } from "@/lib/oauth/config";
import { publicBaseUrl } from "@/lib/services/shared/public-url";
import { connectionSnippets } from "@/lib/web/connection-snippets";

export const metadata: Metadata = { title: "Connect an AI platform" };

export default async function ConnectPage() {
  const list = await headers();
  // A Host that is not one of Cairn's names is not echoed back: the configured address stands in.
  const endpoint = oauthUrls(publicOrigin(list) ?? publicBaseUrl()).resource;
  const snippets = connectionSnippets(endpoint, "<your key>");
  return (
    <article className="prose">
      <h1>Connect an AI platform</h1>
      <p>
        Cairn speaks the Model Context Protocol over Streamable HTTP at <code>{endpoint}</code>.
        Every request carries a credential in the <code>Authorization</code> header (never in the
        URL): which one depends on the client.
      </p>
      <ul>
        <li>
          <strong>Claude.ai, ChatGPT and other platforms with connectors</strong>: OAuth. No key to
          copy: you sign in to Cairn and approve the app.
        </li>
        <li>
          <strong>Scripts, CLIs, Claude Code, the MCP Inspector</strong>: an API key.
        </li>
      </ul>
      <h2>Claude.ai or ChatGPT (OAuth)</h2>
      <p>
        Add a custom connector and paste this URL:{" "}
        <code data-testid="connector-url">{endpoint}</code>. In Claude.ai: Settings → Connectors →
        Add custom connector. In ChatGPT: Settings → Connectors (developer mode) → Create. The
        platform opens Cairn in your browser: sign in, check the app and account on the consent
        page, and approve. The app then acts as you, in your team, until you revoke it under{" "}
        <em>Account</em> (an admin also sees every app under <em>Users &amp; keys</em>).
      </p>
      <p>
        The server must be reachable from the platform at that address over HTTPS: set{" "}
        <code>CAIRN_PUBLIC_URL</code> to it.
      </p>
      <h2>1. Get an API key</h2>
      <p>
        An admin creates one on the <em>Users &amp; keys</em> page, or on the server with the CLI;
        it is shown once:
      </p>
      <pre>
        <code>npm run cairn -- create-api-key --email you@example.com --name "Claude Code"</code>
      </pre>
      <h2>2. Add Cairn to your client</h2>
      <h3>Claude Code</h3>
      <pre>
        <code>{snippets.claudeCode}</code>
      </pre>
      <h3>Any MCP client (JSON configuration)</h3>
      <pre>
        <code>{snippets.jsonConfig}</code>
      </pre>
      <h3>MCP Inspector (command line)</h3>
      <pre>
        <code>{snippets.inspector}</code>
      </pre>
    </article>
  );
}
