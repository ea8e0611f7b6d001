import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Cairn", template: "%s · Cairn" },
  description: "A durable research-plan engine for AI platforms, with people at the checkpoints.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="site-header">
          <Link href="/" className="brand">
            Cairn
          </Link>
          <nav aria-label="Main">
            <Link href="/connect">Connect an AI platform</Link>
            <Link href="/sign-in">Sign in</Link>
          </nav>
        </header>
        <main id="main">{children}</main>
      </body>
    </html>
  );
}
