import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { oneParam } from "@/app/_components/pagination";
import { requireUser } from "@/lib/auth/session";
import { views } from "@/lib/web/views";
import { ForkForm } from "./fork-form";

export const metadata: Metadata = { title: "Fork a plan" };

/**
 * "Fork from here" (docs/history-and-forks.md): a new plan whose steps before
 * `?step=` are carried with their results, and whose step `?step=` and later
 * ones start again with the edits made here.
 */
export default async function ForkPage({
  params,
  searchParams,
}: {
  params: Promise<{ planId: string }>;
  searchParams: Promise<{ step?: string | string[] }>;
}) {
  const user = await requireUser();
  const { planId } = await params;
  const stepId = oneParam((await searchParams).step) ?? "";
  const form = await views.forkForm(user, planId, stepId);
  if (!form) notFound();
  return (
    <article className="plan">
      <p>
        <Link href={`/plans/${planId}`}>← {form.name}</Link>
      </p>
      <h1>Fork from step {form.fromStepOrder}</h1>
      <p className="lead">
        A new plan: steps 1–{form.fromStepOrder - 1 || 0} are carried with their results, evidence
        and decisions; step {form.fromStepOrder} and those after it start again, with your edits.
        This plan is not changed.
      </p>
      {form.moreSteps ? (
        <p className="muted">
          The steps after step {form.fromStepOrder + form.steps.length - 1} are forked as they are;
          change them in the new plan.
        </p>
      ) : null}
      <ForkForm
        planId={form.planId}
        fromStepId={form.fromStepId}
        name={form.name}
        steps={form.steps}
      />
    </article>
  );
}
