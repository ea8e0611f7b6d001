/** The MCP Inspector the snippet runs, checked against Cairn (README, "Connect an AI platform"). */
const INSPECTOR_VERSION = "2.12.0";

/** Copy-ready ways to connect an MCP client to this server with a key (the admin page and /connect). */
export function connectionSnippets(endpoint: string, key: string) {
  return {
    claudeCode: `claude mcp add --transport http cairn ${endpoint} --header "Authorization: Bearer ${key}"`,
    jsonConfig: JSON.stringify(
      {
        mcpServers: {
          cairn: { type: "http", url: endpoint, headers: { Authorization: `Bearer ${key}` } },
        },
      },
      null,
      2,
    ),
    // The Inspector 2.x needs Node 22: npx fetches it for this one command (and
    // keeps npm's engine warnings about the Node running npx itself quiet).
    inspector: `npx -y --loglevel=error -p node@22 -p @modelcontextprotocol/inspector@${INSPECTOR_VERSION} mcp-inspector --cli ${endpoint} --transport http --header "Authorization: Bearer ${key}" --method tools/list`,
  };
}
