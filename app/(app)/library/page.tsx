import type { Metadata } from "next";
import Link from "next/link";
import { CursorRefused, oneParam, Pagination, pageHref } from "@/app/_components/pagination";
import { Snippet } from "@/app/_components/snippet";
import { Time } from "@/app/_components/time";
import { requireUser } from "@/lib/auth/session";
import { isAppError } from "@/lib/plan-engine/app-error";
import { isCursorRefused, orCursorRefused } from "@/lib/services/shared/pagination";
import { views } from "@/lib/web/views";

export const metadata: Metadata = { title: "Research library" };

type Search = {
  q?: string | string[];
  type?: string | string[];
  since?: string | string[];
  cursor?: string | string[];
};

export default async function LibraryPage({ searchParams }: { searchParams: Promise<Search> }) {
  const user = await requireUser();
  const search = await searchParams;
  const q = oneParam(search.q)?.trim() ?? "";
  const artifactType = oneParam(search.type);
  const since = oneParam(search.since);
  const artifactTypes = await views.artifactTypes(user);
  return (
    <section>
      <h1>Research library</h1>
      <p className="muted">
        Everything the AI platforms stored with <code>store_research</code>, searched the way{" "}
        <code>search_sources</code> searches it: full text with stemming and typo-tolerant titles.
      </p>
      <search aria-label="Search the library">
        <form className="filters">
          <label>
            Search
            <input
              name="q"
              type="search"
              defaultValue={q}
              placeholder="e.g. heat pump efficiency"
            />
          </label>
          <label>
            Type
            <select name="type" defaultValue={artifactType ?? ""}>
              <option value="">All types</option>
              {artifactTypes.map((type) => (
                <option key={type}>{type}</option>
              ))}
            </select>
          </label>
          <label>
            Since
            <input name="since" type="date" defaultValue={since ?? ""} />
          </label>
          <button type="submit" className="button">
            Search
          </button>
        </form>
      </search>
      {q ? (
        <SearchResults user={user} q={q} artifactType={artifactType} since={since} />
      ) : (
        <Recent user={user} artifactType={artifactType} cursor={oneParam(search.cursor)} />
      )}
    </section>
  );
}

type User = Awaited<ReturnType<typeof requireUser>>;

async function SearchResults({
  user,
  q,
  artifactType,
  since,
}: {
  user: User;
  q: string;
  artifactType?: string;
  since?: string;
}) {
  const found = await views
    .search(user, { query: q, artifactType, since, limit: 25 })
    .catch((error: unknown) => (isAppError(error) ? error : Promise.reject(error)));
  if (isAppError(found)) {
    return (
      <p role="alert" className="notice notice-error">
        This search cannot run: {found.message}
      </p>
    );
  }
  if (found.results.length === 0) {
    return (
      <p className="empty card">Nothing in the library matches “{q}”. Try fewer or other words.</p>
    );
  }
  return (
    <ol className="cards" data-testid="search-results">
      {found.results.map((hit) => (
        <li key={hit.artifactId} className="card">
          <h2 className="hit-title">
            <Link href={`/library/${hit.artifactId}`}>{hit.title}</Link>
          </h2>
          <p className="muted">
            {hit.artifactType} · <Time iso={hit.createdAt} /> · score {hit.score.toFixed(3)}
            {hit.researchQuestion ? <> · for “{hit.researchQuestion}”</> : null}
          </p>
          <p>
            <Snippet text={hit.snippet} />
          </p>
        </li>
      ))}
    </ol>
  );
}

async function Recent({
  user,
  artifactType,
  cursor,
}: {
  user: User;
  artifactType?: string;
  cursor?: string;
}) {
  const list = await orCursorRefused(views.artifacts(user, { artifactType, cursor })).catch(
    (error: unknown) => (isAppError(error) ? error : Promise.reject(error)),
  );
  if (isCursorRefused(list)) {
    return <CursorRefused firstPage={pageHref("/library", { type: artifactType })} />;
  }
  if (isAppError(list)) {
    // A type no form offers (`?type=Bad-Type`): the page says why, as a search does.
    return (
      <p role="alert" className="notice notice-error">
        This list cannot be shown: {list.message} <Link href="/library">Show every type</Link>.
      </p>
    );
  }
  if (list.artifacts.length === 0) {
    return (
      <p className="empty card">
        The library is empty. Agents add to it with <code>store_research</code> while they work.
      </p>
    );
  }
  return (
    <>
      <h2>Newest</h2>
      <ol className="cards" data-testid="recent-artifacts">
        {list.artifacts.map((artifact) => (
          <li key={artifact.artifactId} className="card">
            <h3 className="hit-title">
              <Link href={`/library/${artifact.artifactId}`}>{artifact.title}</Link>
            </h3>
            <p className="muted">
              {artifact.artifactType} · <Time iso={artifact.createdAt} />
              {artifact.researchQuestion ? <> · for “{artifact.researchQuestion}”</> : null}
            </p>
            <p className="clamp">{artifact.excerpt}</p>
          </li>
        ))}
      </ol>
      <Pagination
        cursor={list.cursor}
        nextCursor={list.nextCursor}
        basePath="/library"
        params={{ type: artifactType }}
        label="Library pages"
        testId="library"
      >
        {list.total} artifacts in all
      </Pagination>
    </>
  );
}
