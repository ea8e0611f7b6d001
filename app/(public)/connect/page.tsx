import type { Metadata } from "next";
import { headers } from "next/headers";
import { connectionSnippets } from "@/lib/web/connection-snippets";

export const metadata: Metadata = { title: "Connect an AI platform" };

export default async function ConnectPage() {
  const list = await headers();
  const host = list.get("x-forwarded-host") ?? list.get("host") ?? "localhost:3000";
  const endpoint = `${list.get("x-forwarded-proto") ?? "http"}://${host}/api/mcp`;
  const snippets = connectionSnippets(endpoint, "<your key>");
  return (
    <article className="prose">
      <h1>Connect an AI platform</h1>
      <p>
        Cairn speaks the Model Context Protocol over Streamable HTTP at <code>{endpoint}</code>.
        Every request carries an API key in the <code>Authorization</code> header; a key in the URL
        is never accepted.
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
