import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { needsFirstRun } from "@/lib/web/first-run";
import { SetupForm } from "./setup-form";

export const metadata: Metadata = { title: "Set up Cairn" };
export const dynamic = "force-dynamic";

export default async function SetupPage() {
  if (!(await needsFirstRun())) redirect("/sign-in");
  return (
    <section className="narrow">
      <h1>Set up Cairn</h1>
      <p>
        Nobody has an account yet. Create the first admin: you can then add researchers and API keys
        for your AI platforms.
      </p>
      <SetupForm />
    </section>
  );
}
