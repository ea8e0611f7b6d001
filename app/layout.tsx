import type { Metadata } from "next";
import { connection } from "next/server";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Cairn", template: "%s · Cairn" },
  description: "A durable research-plan engine for AI platforms, with people at the checkpoints.",
};

/**
 * Every page renders per request: its scripts carry the nonce of the request's
 * Content-Security-Policy (proxy.ts), which a page prerendered at build time
 * could not have.
 */
export default async function RootLayout({ children }: { children: ReactNode }) {
  await connection();
  return (
    <html lang="en">
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        {children}
      </body>
    </html>
  );
}
