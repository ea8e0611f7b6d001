import Link from "next/link";
import type { ReactNode } from "react";
import { SignedInHeader } from "@/app/_components/site-header";
import { currentUser } from "@/lib/auth/session";

export default async function PublicLayout({ children }: { children: ReactNode }) {
  // A signed-in person opening a public page (Connect) keeps their own header.
  const user = await currentUser();
  return (
    <>
      {user ? (
        <SignedInHeader user={user} />
      ) : (
        <header className="site-header">
          <Link href="/" className="brand">
            Cairn
          </Link>
          <nav aria-label="Main">
            <Link href="/connect">Connect an AI platform</Link>
            <Link href="/sign-in">Sign in</Link>
          </nav>
        </header>
      )}
      <main id="main">{children}</main>
    </>
  );
}
