import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { needsFirstRun } from "@/lib/web/first-run";
import { foreignHost } from "@/lib/web/request";
import { SetupForm } from "./setup-form";

export const metadata: Metadata = { title: "Set up Cairn" };
export const dynamic = "force-dynamic";

export default async function SetupPage() {
  if (!(await needsFirstRun())) redirect("/sign-in");
  const host = await foreignHost();
  return (
    <section className="narrow">
      <h1>Set up Cairn</h1>
      <p>
        Nobody has an account yet. Create the first admin: you can then add researchers and API keys
        for your AI platforms.
      </p>
      {host !== undefined ? (
        <p role="alert" className="notice notice-error" data-testid="setup-foreign-host">
          {`Set-up is not available at the address ${host}. Open it at http://127.0.0.1 or localhost on the server's machine, or add this address to CAIRN_ALLOWED_ORIGINS.`}
        </p>
      ) : (
        <>
          <p className="muted">
            The server printed a one-time <strong>setup code</strong> to its log when it started
            (&ldquo;Cairn setup code: …&rdquo;). To get another, restart the server, or run{" "}
            <code>npm run cairn -- setup-code</code> on it: with the embedded database (no{" "}
            <code>DATABASE_URL</code>) only while the server is stopped.
          </p>
          <SetupForm />
        </>
      )}
    </section>
  );
}
