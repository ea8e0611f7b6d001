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
    inspector: `npx @modelcontextprotocol/inspector@1.0.3 --cli ${endpoint} --transport http --header "Authorization: Bearer ${key}" --method tools/list`,
  };
}
