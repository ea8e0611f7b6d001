/**
 * Cairn's MCP Apps (the `io.modelcontextprotocol/ui` extension, docs/mcp-apps.md):
 * the review card and the plan card, each one self-contained HTML document
 * built from cards/ by `npm run build:cards` (scripts/build-cards.ts) and
 * served by resources/read in both protocol eras (by the URI a tool names;
 * resources/list keeps to the account's plans, which a person browses). Tools name their card in
 * `_meta.ui.resourceUri`; the host renders it in a sandboxed iframe and relays
 * its calls to the app-only tools (`visibility: ["app"]`).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { CallToolResult, ReadResourceResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { reviewPageUrl } from "../services/shared/public-url";

export const REVIEW_CARD_URI = "ui://cairn/review-card.html";
export const PLAN_CARD_URI = "ui://cairn/plan-card.html";

/** The MCP Apps type of an HTML view (the extension's RESOURCE_MIME_TYPE). */
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

/** Where the built cards are, relative to the app's root (scripts/build-cards.ts writes them). */
export const CARDS_DIR = path.join("build", "cards");

const CARDS = {
  [REVIEW_CARD_URI]: "review-card.html",
  [PLAN_CARD_URI]: "plan-card.html",
} as const;

type CardUri = keyof typeof CARDS;

/** Every card's resource, as docs/mcp-apps.md's table of cards lists them (lib/mcp/tool-docs.test.ts). */
export const CARD_URIS = Object.keys(CARDS) as CardUri[];

/**
 * Each card loads nothing from anywhere: every script and style is inline, and
 * its data comes through the host's relay of Cairn's tools, so the policy
 * allows no origin at all (no fetch, image, frame or base URI).
 */
const CARD_UI_META = {
  ui: {
    csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] },
    prefersBorder: true,
  },
};

export function isCardUri(uri: string): uri is CardUri {
  return Object.hasOwn(CARDS, uri);
}

const html = new Map<CardUri, string>();

/** A card's document, read once per process from the build. */
export async function readCard(uri: CardUri): Promise<ReadResourceResult> {
  let text = html.get(uri);
  if (text === undefined) {
    const file = path.join(process.cwd(), CARDS_DIR, CARDS[uri]);
    text = await readFile(file, "utf8").catch(() => {
      throw new Error(`${file} is missing: build the cards with npm run build (or build:cards).`);
    });
    html.set(uri, text);
  }
  return { contents: [{ uri, mimeType: APP_MIME_TYPE, text, _meta: CARD_UI_META }] };
}

/** A tool's link to its card, in the extension's form and its older flat key (for older hosts). */
export function cardLink(uri: CardUri) {
  return { ui: { resourceUri: uri }, "ui/resourceUri": uri };
}

/** An app-only tool: hidden from the model, callable by Cairn's cards through the host. */
export const APP_ONLY = { ui: { visibility: ["app"] } };

export function isAppOnly(tool: { _meta?: Record<string, unknown> | undefined }): boolean {
  const visibility = (tool._meta?.ui as { visibility?: unknown } | undefined)?.visibility;
  return Array.isArray(visibility) && visibility.length === 1 && visibility[0] === "app";
}

/** The extension's id in a client's capabilities. */
const APPS_EXTENSION = "io.modelcontextprotocol/ui";

const envelopeCapabilities = z.object({
  "io.modelcontextprotocol/clientCapabilities": z
    .object({ extensions: z.record(z.string(), z.unknown()).optional() })
    .loose(),
});

/**
 * Whether the client of a request is listed, and may call, the cards'
 * app-only tools. A host that renders MCP Apps keeps them from its model; a
 * client that does not would show them to it (and an agent could decide in a
 * card no person saw), so a 2026-07-28 request, which always carries its
 * client's capabilities, gets them only where those declare the Apps
 * extension. A 2025-era request carries no capabilities (they were declared
 * once, at initialize, on a session this stateless route does not keep), so
 * nothing tells a host from an agent there: the tools are listed, and a card's
 * decision counts as a person's only from an app the team's admins named
 * among its trusted apps (docs/mcp-apps.md, "What is listed to whom").
 */
export function mayCallAppOnly(envelope: unknown): boolean {
  const parsed = envelopeCapabilities.safeParse(envelope ?? {});
  if (!parsed.success) return true;
  const declared = parsed.data["io.modelcontextprotocol/clientCapabilities"];
  return Object.hasOwn(declared.extensions ?? {}, APPS_EXTENSION);
}

/**
 * What a client that will not render the review card (a 2026-07-28 request
 * without the Apps extension) shows its person beside the JSON written for
 * the model, when the answer of a tool naming that card leaves a review
 * waiting: the review page's link, which the card would have offered.
 */
export function reviewLinkWithoutCard(
  tool: { _meta?: Record<string, unknown> | undefined },
  output: object,
  envelope: unknown,
): CallToolResult["content"] {
  const card = (tool._meta?.ui as { resourceUri?: unknown } | undefined)?.resourceUri;
  if (card !== REVIEW_CARD_URI || mayCallAppOnly(envelope)) return [];
  const answer = output as { planId?: unknown; status?: unknown; planStatus?: unknown };
  const waiting = answer.status === "awaiting_review" || answer.planStatus === "awaiting_review";
  if (!waiting || typeof answer.planId !== "string") return [];
  return [
    {
      type: "text",
      text: `A person's review is waiting in Cairn. Open the review page to decide: ${reviewPageUrl(answer.planId)}`,
    },
  ];
}
