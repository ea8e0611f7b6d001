import Link from "next/link";
import type { ReactNode } from "react";

export default function PublicLayout({ children }: { children: ReactNode }) {
  return (
    <>
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
    </>
  );
}
