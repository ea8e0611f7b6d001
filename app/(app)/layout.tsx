import type { ReactNode } from "react";
import { SignedInHeader } from "@/app/_components/site-header";
import { requireUser } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

export default async function AppLayout({ children }: { children: ReactNode }) {
  const user = await requireUser();
  return (
    <>
      <SignedInHeader user={user} />
      <main id="main">{children}</main>
    </>
  );
}
