import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";
import { needsFirstRun } from "@/lib/web/first-run";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ callbackUrl?: string }>;
}) {
  if (await needsFirstRun()) redirect("/setup");
  if (await currentUser()) redirect("/plans");
  const { callbackUrl } = await searchParams;
  return (
    <section className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Researchers and admins of your Cairn team sign in here.</p>
      <SignInForm callbackUrl={callbackUrl} />
    </section>
  );
}
