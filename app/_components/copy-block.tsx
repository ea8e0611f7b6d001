"use client";

import { useState } from "react";
import { connectionSnippets } from "@/lib/web/connection-snippets";

/**
 * A labelled block of text to paste elsewhere (a key, a client's configuration),
 * with a Copy button. The clipboard is refused outside a secure context (plain
 * HTTP on a LAN address), so a refusal says to select the text instead.
 */
export function CopyBlock({
  label,
  text,
  testId,
}: {
  label: string;
  text: string;
  testId: string;
}) {
  const [state, setState] = useState<"idle" | "copied" | "refused">("idle");
  return (
    <div className="copy-block">
      <div className="copy-head">
        <strong>{label}</strong>
        <button
          type="button"
          className="link-button"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(text);
              setState("copied");
            } catch {
              setState("refused");
            }
          }}
        >
          {state === "copied" ? "Copied" : "Copy"}
          <span className="sr-only"> {label}</span>
        </button>
        {state === "refused" ? (
          <span className="muted" role="status">
            The browser refused the clipboard here: select the text and copy it.
          </span>
        ) : null}
      </div>
      <pre data-testid={testId}>
        <code>{text}</code>
      </pre>
    </div>
  );
}

/** The ways to connect a client with a key, each to copy: the key page (its new key) and /connect (a placeholder). */
export function ConnectionSnippets({
  endpoint,
  credential,
}: {
  endpoint: string;
  credential: string;
}) {
  const snippets = connectionSnippets(endpoint, credential);
  return (
    <>
      <CopyBlock label="Claude Code" text={snippets.claudeCode} testId="snippet-claude" />
      <CopyBlock
        label="Any MCP client (JSON configuration)"
        text={snippets.jsonConfig}
        testId="snippet-json"
      />
      <CopyBlock
        label="MCP Inspector (command line)"
        text={snippets.inspector}
        testId="snippet-inspector"
      />
    </>
  );
}
