/**
 * What both cards share: the connection to the host (the MCP Apps SDK's App),
 * the host's theme and fonts (its danger colour only where it stays readable),
 * the height the host allows, the plan the tool call was about, Cairn's tools
 * called through the host, and links opened by the host (a sandboxed frame
 * cannot open them itself).
 */
import type { App, McpUiHostContext } from "@modelcontextprotocol/ext-apps";
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

/** WCAG AA for normal text. */
const AA_CONTRAST = 4.5;

/** A CSS colour as the browser paints it, in sRGB 0–255 (a canvas takes any colour syntax). */
function paintedRgb(color: string): [number, number, number] {
  const canvas = document.createElement("canvas");
  canvas.width = 1;
  canvas.height = 1;
  const context = canvas.getContext("2d");
  if (!context) return [0, 0, 0];
  context.fillStyle = color;
  context.fillRect(0, 0, 1, 1);
  const [red = 0, green = 0, blue = 0] = context.getImageData(0, 0, 1, 1).data;
  return [red, green, blue];
}

function luminance(rgb: [number, number, number]): number {
  const [red, green, blue] = rgb.map((channel) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * red + 0.7152 * green + 0.0722 * blue;
}

/** The colour `value` (any CSS, variables included) resolves to in this document. */
function resolvedColor(value: string): string {
  const probe = document.createElement("span");
  probe.style.color = value;
  document.body.append(probe);
  const color = getComputedStyle(probe).color;
  probe.remove();
  return color;
}

/**
 * The danger colour (Reject's text, the confirmed reject's background) is the
 * host's --color-text-danger only where it reaches AA contrast on the card's
 * background: hosts send values that do not (4.48:1 in one host's light
 * theme). Else Cairn's own, else the host's primary text colour.
 */
function keepDangerReadable() {
  const root = document.documentElement;
  const background = luminance(paintedRgb(getComputedStyle(document.body).backgroundColor));
  const readable = ["var(--color-text-danger)", "var(--c-danger-own)"].find((candidate) => {
    const color = luminance(paintedRgb(resolvedColor(candidate)));
    const [light, dark] = color > background ? [color, background] : [background, color];
    return (light + 0.05) / (dark + 0.05) >= AA_CONTRAST;
  });
  root.style.setProperty("--c-danger", readable ?? "var(--c-text)");
}

/**
 * Within the host's maximum height the card scrolls itself: the SDK reports
 * the document's height for the frame (autoResize), which max-height bounds.
 */
function fitContainer(dimensions: McpUiHostContext["containerDimensions"]) {
  const maxHeight = dimensions && "maxHeight" in dimensions ? dimensions.maxHeight : undefined;
  document.documentElement.style.maxHeight = maxHeight ? `${maxHeight}px` : "";
}

/** The host's context as it changes, applied after useHostStyles has applied its theme. */
function useHostContainer(app: App | null) {
  useEffect(() => {
    if (!app) return;
    const apply = () => {
      fitContainer(app.getHostContext()?.containerDimensions);
      keepDangerReadable();
    };
    apply();
    app.addEventListener("hostcontextchanged", apply);
    return () => app.removeEventListener("hostcontextchanged", apply);
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
  useHostContainer(app);
  useLinksThroughHost(app);
  return { app, error, planId };
}
