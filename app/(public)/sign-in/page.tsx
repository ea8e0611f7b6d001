import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";
import { needsFirstRun } from "@/lib/web/first-run";
import { signInRefusal } from "@/lib/web/sign-in-refusal";
import { SignInForm } from "./sign-in-form";

export const metadata: Metadata = { title: "Sign in" };
export const dynamic = "force-dynamic";

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ callbackUrl?: string; error?: string; code?: string }>;
}) {
  if (await needsFirstRun()) redirect("/setup");
  if (await currentUser()) redirect("/plans");
  // Auth.js sends a refused direct POST to its callback back here with ?error=&code=.
  const { callbackUrl, error, code } = await searchParams;
  const refused = error === "CredentialsSignin" ? signInRefusal(code) : undefined;
  return (
    <section className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Researchers and admins of your Cairn team sign in here.</p>
      <SignInForm callbackUrl={callbackUrl} refused={refused} />
    </section>
  );
}
