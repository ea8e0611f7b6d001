/**
 * What both cards share: the connection to the host (the MCP Apps SDK's App),
 * the host's theme and fonts, the plan the tool call was about, Cairn's tools
 * called through the host, and links opened by the host (a sandboxed frame
 * cannot open them itself).
 */
import type { App } from "@modelcontextprotocol/ext-apps";
import { useApp, useHostStyles } from "@modelcontextprotocol/ext-apps/react";
import { useEffect, useState } from "react";

/** A Cairn tool's error, as its text says it: the code, then what to do. */
export class CairnError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Calls one of Cairn's tools through the host; its structured answer, or a CairnError. */
export async function callCairn<T>(app: App, name: string, args: Record<string, unknown>) {
  const result = await app.callServerTool({ name, arguments: args });
  const first = result.content?.[0];
  const text = first?.type === "text" ? first.text : "";
  if (result.isError) {
    const [, code = "ERROR", message = text] = /^([A-Z_]+): ([\s\S]*)$/.exec(text) ?? [];
    throw new CairnError(code, message);
  }
  return (result.structuredContent ?? JSON.parse(text)) as T;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Cairn's own address, learnt from the first read, for the pages' relative links. */
let cairnOrigin: string | undefined;
export function learnOrigin(url: string) {
  cairnOrigin = new URL(url).origin;
}

/** Every link in the card opens through the host (ui/open-link), at Cairn's address. */
function useLinksThroughHost(app: App | null) {
  useEffect(() => {
    if (!app) return;
    const open = (event: MouseEvent) => {
      const anchor = (event.target as Element | null)?.closest?.("a[href]");
      if (!anchor) return;
      event.preventDefault();
      const url = new URL(anchor.getAttribute("href") ?? "", cairnOrigin).toString();
      void app.openLink({ url });
    };
    document.addEventListener("click", open);
    return () => document.removeEventListener("click", open);
  }, [app]);
}

/**
 * The card's connection, and the plan the host's tool call was about: its
 * arguments name it (planId), or, for create_research_plan, its result does.
 */
export function useCard(name: string) {
  const [planId, setPlanId] = useState<string | null>(null);
  const { app, error } = useApp({
    appInfo: { name, version: "1.0.0" },
    capabilities: {},
    onAppCreated: (created) => {
      created.ontoolinput = ({ arguments: args }) => {
        if (typeof args?.planId === "string") setPlanId(args.planId);
      };
      created.ontoolresult = ({ structuredContent }) => {
        const named = (structuredContent as { planId?: unknown } | undefined)?.planId;
        if (typeof named === "string") setPlanId(named);
      };
    },
  });
  useHostStyles(app, app?.getHostContext());
  useLinksThroughHost(app);
  return { app, error, planId };
}
