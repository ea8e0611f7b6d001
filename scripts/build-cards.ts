/**
 * Builds Cairn's MCP App cards (lib/mcp/apps.ts): each entry in cards/ is
 * bundled with React, the review panel's components and the MCP Apps SDK into
 * one self-contained HTML document (script and style inline, nothing loaded
 * from anywhere), written to build/cards/ for resources/read to serve.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { build } from "esbuild";
import { CARDS_DIR } from "../lib/mcp/apps";

const ENTRIES = [
  { entry: "cards/review-card.tsx", file: "review-card.html", title: "Cairn review card" },
  { entry: "cards/plan-card.tsx", file: "plan-card.html", title: "Cairn plan card" },
];

/** `</script` inside the bundle would end the inline script early. */
const inlineSafe = (code: string) => code.replaceAll("</script", "<\\/script");

async function buildCard(card: (typeof ENTRIES)[number], css: string): Promise<number> {
  const bundle = await build({
    entryPoints: [card.entry],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    legalComments: "none",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "warning",
  });
  const script = bundle.outputFiles[0]?.text ?? "";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${card.title}</title>
<style>${css}</style>
</head>
<body>
<main id="root" aria-label="${card.title}"></main>
<script>${inlineSafe(script)}</script>
</body>
</html>
`;
  await writeFile(path.join(CARDS_DIR, card.file), html);
  return Buffer.byteLength(html);
}

async function main() {
  await mkdir(CARDS_DIR, { recursive: true });
  const css = await readFile("cards/card.css", "utf8");
  for (const card of ENTRIES) {
    const bytes = await buildCard(card, css);
    console.log(`${path.join(CARDS_DIR, card.file)}: ${Math.round(bytes / 1024)} KB`);
  }
}

await main();
