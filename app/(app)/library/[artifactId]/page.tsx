import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ShortenedText } from "@/app/_components/shortened-text";
import { Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { shorten } from "@/lib/services/views/full-values";
import { views } from "@/lib/web/views";

export const metadata: Metadata = { title: "Artifact" };

/** Only web links become links; anything else an agent stored is shown as text. */
function safeHref(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A link's text: its address's beginning (an artifact may cite 100 of 2,000 characters each). */
function shownUrl(url: string): string {
  const shown = shorten(url, URL_TEXT_CHARS);
  return shown.shortened ? `${shown.text}…` : shown.text;
}
const URL_TEXT_CHARS = 200;

export default async function ArtifactPage({
  params,
}: {
  params: Promise<{ artifactId: string }>;
}) {
  const user = await requireUser();
  const { artifactId } = await params;
  const artifact = await views.artifact(user, artifactId);
  if (!artifact) notFound();
  return (
    <article className="plan">
      <p>
        <Link href="/library">← Research library</Link>
      </p>
      <h1>{artifact.title}</h1>
      <dl className="facts" data-testid="provenance">
        <dt>Type</dt>
        <dd>{artifact.artifactType}</dd>
        <dt>Stored</dt>
        <dd>
          <Time iso={artifact.createdAt} />
        </dd>
        <dt>Confidence</dt>
        <dd>{artifact.confidence === null ? "—" : artifact.confidence.toFixed(2)}</dd>
        <dt>Plan</dt>
        <dd>
          {artifact.plan ? (
            <Link href={`/plans/${artifact.plan.planId}`}>{artifact.plan.name}</Link>
          ) : (
            "Not linked to a plan"
          )}
        </dd>
        {artifact.plan?.researchQuestion ? (
          <>
            <dt>Question</dt>
            <dd>{artifact.plan.researchQuestion}</dd>
          </>
        ) : null}
        {artifact.step ? (
          <>
            <dt>Step</dt>
            <dd>
              {artifact.step.stepOrder}. {artifact.step.stepType}
            </dd>
          </>
        ) : null}
      </dl>
      <h2>Content</h2>
      <ShortenedText
        value={artifact.contentText}
        href={`/library/${artifact.artifactId}/full?part=contentText`}
        testId="artifact-text"
      />
      <details>
        <summary>Structured content</summary>
        <ShortenedText
          value={artifact.content}
          href={`/library/${artifact.artifactId}/full?part=content`}
          testId="artifact-content"
          json
        />
      </details>
      <h2>Sources</h2>
      {artifact.sourceUrls.length === 0 ? (
        <p className="muted">No source URLs were stored.</p>
      ) : (
        <ul data-testid="sources">
          {artifact.sourceUrls.map((url) => {
            const href = safeHref(url);
            return (
              <li key={url}>
                {href ? (
                  <a href={href} rel="noopener noreferrer nofollow" target="_blank">
                    {shownUrl(url)}
                  </a>
                ) : (
                  shownUrl(url)
                )}
              </li>
            );
          })}
        </ul>
      )}
    </article>
  );
}
