import type { Metadata } from "next";
import { headers } from "next/headers";
import Link from "next/link";
import { ConnectionSnippets, CopyBlock } from "@/app/_components/copy-block";
import { oauthUrls, publicOrigin } from "@/lib/oauth/config";
import { publicBaseUrl } from "@/lib/services/shared/public-url";

export const metadata: Metadata = { title: "Connect an AI platform" };

export default async function ConnectPage() {
  const list = await headers();
  // A Host that is not one of Cairn's names is not echoed back: the configured address stands in.
  const endpoint = oauthUrls(publicOrigin(list) ?? publicBaseUrl()).resource;
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
        An admin creates one on the <Link href="/admin/users">Users &amp; keys</Link> page, or on
        the server with the CLI; it is shown once:
      </p>
      <CopyBlock
        label="Create a key on the server"
        text={'npm run cairn -- create-api-key --email you@example.com --name "Claude Code"'}
        testId="snippet-create-key"
      />
      <p>
        On the embedded database (no <code>DATABASE_URL</code>), stop the server first: one process
        at a time can open its folder, and the command says so if the server still holds it. With{" "}
        <code>DATABASE_URL</code> set, the server can keep running.
      </p>
      <h2>2. Add Cairn to your client</h2>
      <p>
        Replace <code>&lt;your key&gt;</code> with the key. The key page shows these with your key
        already in them.
      </p>
      <ConnectionSnippets endpoint={endpoint} credential="<your key>" />
      <p>
        If the Inspector answers <q>Interactive OAuth requires a TTY</q>, Cairn refused the key
        (wrong, revoked, or still the placeholder): Cairn answered 401, and the Inspector, finding
        no key it could use, tried to sign in with OAuth instead. Check the key in the{" "}
        <code>Authorization</code> header.
      </p>
    </article>
  );
}
