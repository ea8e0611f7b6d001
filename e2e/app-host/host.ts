/**
 * A minimal MCP Apps host for the browser tests (e2e/mcp-apps.spec.ts), as a
 * chat client renders a tool's card: the card's HTML in a sandboxed iframe
 * (scripts only, under the CSP its `_meta.ui.csp` asks for), connected through
 * the SDK's AppBridge. The card's tool calls go to `window.callCairnTool`,
 * which the test binds to its MCP client (SDK v2 or 1.x) on Cairn's route; what
 * the card tells the model and the links it opens are recorded for the test.
 */

import type { CallToolResult } from "@modelcontextprotocol/client";
import {
  AppBridge,
  type McpUiHostContext,
  type McpUiResourceCsp,
  PostMessageTransport,
} from "@modelcontextprotocol/ext-apps/app-bridge";

type CardRequest = {
  html: string;
  csp: McpUiResourceCsp | undefined;
  theme: "light" | "dark";
  /** The host's own style variables and container, as a chat client sends them. */
  styles?: McpUiHostContext["styles"];
  containerDimensions?: McpUiHostContext["containerDimensions"];
  toolInput: Record<string, unknown>;
  toolResult: CallToolResult;
};

declare global {
  interface Window {
    callCairnTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
    showCard(request: CardRequest): Promise<void>;
    modelContext: string[];
    openedLinks: string[];
  }
}

/** The host's policy for the frame: the card's own inline code, and only the origins it names. */
function policyFor(csp: McpUiResourceCsp | undefined): string {
  const list = (domains: string[] | undefined) => (domains?.length ? domains.join(" ") : "'none'");
  const resources = csp?.resourceDomains?.join(" ") ?? "";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src ${resources || "'none'"}`,
    `connect-src ${list(csp?.connectDomains)}`,
    `frame-src ${list(csp?.frameDomains)}`,
    `base-uri ${list(csp?.baseUriDomains)}`,
  ].join("; ");
}

window.modelContext = [];
window.openedLinks = [];

window.showCard = async ({
  html,
  csp,
  theme,
  styles,
  containerDimensions,
  toolInput,
  toolResult,
}) => {
  document.body.dataset.theme = theme;
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "Cairn card";
  frame.style.cssText = "width: 100%; max-width: 640px; height: 480px; border: 1px solid #888;";
  frame.srcdoc = html.replace(
    "<head>",
    `<head><meta http-equiv="Content-Security-Policy" content="${policyFor(csp)}">`,
  );
  document.querySelector("iframe")?.remove();
  document.querySelector("main")?.append(frame);
  const window_ = frame.contentWindow;
  if (!window_) throw new Error("the card's frame has no window");

  const bridge = new AppBridge(
    null,
    { name: "Cairn test host", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, updateModelContext: { text: {} } },
    {
      hostContext: {
        theme,
        displayMode: "inline",
        platform: "web",
        ...(styles ? { styles } : {}),
        ...(containerDimensions ? { containerDimensions } : {}),
      },
    },
  );
  bridge.oncalltool = (params) => window.callCairnTool(params.name, params.arguments ?? {});
  bridge.onopenlink = async ({ url }) => {
    window.openedLinks.push(url);
    return {};
  };
  bridge.onupdatemodelcontext = async ({ content }) => {
    for (const block of content ?? [])
      if (block.type === "text") window.modelContext.push(block.text);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  bridge.oninitialized = () => {
    void bridge.sendToolInput({ arguments: toolInput });
    void bridge.sendToolResult(toolResult);
  };
  await bridge.connect(new PostMessageTransport(window_, window_));
};
