import type { Metadata } from "next";

export const metadata: Metadata = { title: "Connect an AI platform" };

const ENDPOINT = "http://localhost:3000/api/mcp";

export default function ConnectPage() {
  return (
    <article className="prose">
      <h1>Connect an AI platform</h1>
      <p>
        Cairn speaks the Model Context Protocol over Streamable HTTP at <code>/api/mcp</code>. Every
        request carries an API key in the <code>Authorization</code> header; a key in the URL is
        never accepted.
      </p>
      <h2>1. Get an API key</h2>
      <p>An administrator creates one for your user; it is shown once:</p>
      <pre>
        <code>npm run cairn -- create-api-key --email you@example.com --name "Claude Code"</code>
      </pre>
      <h2>2. Add Cairn to your client</h2>
      <h3>Claude Code</h3>
      <pre>
        <code>{`claude mcp add --transport http cairn ${ENDPOINT} \\
  --header "Authorization: Bearer <your key>"`}</code>
      </pre>
      <h3>Any MCP client (JSON configuration)</h3>
      <pre>
        <code>
          {JSON.stringify(
            {
              mcpServers: {
                cairn: {
                  type: "http",
                  url: ENDPOINT,
                  headers: { Authorization: "Bearer <your key>" },
                },
              },
            },
            null,
            2,
          )}
        </code>
      </pre>
      <h3>MCP Inspector (command line)</h3>
      <pre>
        <code>{`npx @modelcontextprotocol/inspector@1.0.3 --cli ${ENDPOINT} --transport http \\
  --header "Authorization: Bearer <your key>" --method tools/list`}</code>
      </pre>
      <p>
        Replace <code>localhost:3000</code> with the address your Cairn server is reachable at.
      </p>
    </article>
  );
}
