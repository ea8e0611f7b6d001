import Link from "next/link";
import type { ReactNode } from "react";
import type { AppError } from "@/lib/plan-engine/app-error";
import { isCursorRefused } from "@/lib/services/shared/pagination";

/**
 * The links of a list that pages by cursor (lib/services/shared/pagination.ts):
 * back to the first page, and on to the next; the page's other query
 * parameters (its filters) are kept in both.
 */
export function Pagination({
  cursor,
  nextCursor,
  basePath,
  params,
  cursorParam = "cursor",
  newestFirst = true,
  linkNames = newestFirst
    ? { first: "← Newest", next: "Older →" }
    : { first: "← Oldest", next: "Newer →" },
  label,
  testId,
  children,
}: {
  /** The cursor this page was read from; absent on the first page. */
  cursor: string | null | undefined;
  nextCursor: string | null;
  basePath: string;
  params: Record<string, string | undefined>;
  cursorParam?: string;
  /** The list's order, for the links' names: newest first (else oldest first). */
  newestFirst?: boolean;
  /** The links' names, for a list that is not in time order (a plan's steps). */
  linkNames?: { first: string; next: string };
  label: string;
  /** Prefix of the nav's, the text's and the next link's test ids. */
  testId: string;
  /** Where the page stands, e.g. how many there are in all. */
  children: ReactNode;
}) {
  if (!cursor && !nextCursor) return null;
  return (
    <nav className="pagination" aria-label={label} data-testid={`${testId}-pages`}>
      {cursor ? (
        <Link href={pageHref(basePath, params, cursorParam)} data-testid={`${testId}-first`}>
          {linkNames.first}
        </Link>
      ) : (
        <span aria-hidden="true" />
      )}
      <span data-testid={`${testId}-shown`}>{children}</span>
      {nextCursor ? (
        <Link
          href={pageHref(basePath, params, cursorParam, nextCursor)}
          data-testid={`${testId}-next`}
        >
          {linkNames.next}
        </Link>
      ) : (
        <span aria-hidden="true" />
      )}
    </nav>
  );
}

/** A page's link: its filters, and the cursor (none: the first page). */
export function pageHref(
  basePath: string,
  params: Record<string, string | undefined>,
  cursorParam = "cursor",
  cursor?: string,
): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...params, [cursorParam]: cursor })) {
    if (value) query.set(key, value);
  }
  const text = query.toString();
  return text ? `${basePath}?${text}` : basePath;
}

/**
 * What a page shows for a cursor its list did not give (an old link, or one
 * edited by hand): the refusal, and the way to the first page with the same
 * filters.
 */
export function CursorRefused({ firstPage }: { firstPage: string }) {
  return (
    <p role="alert" className="notice notice-error" data-testid="cursor-refused">
      This page's link is out of date or was not made by this list, so it cannot say where to start.{" "}
      <Link href={firstPage}>Go to the first page</Link>
    </p>
  );
}

/**
 * What a filtered list page shows when its query is refused (`orQueryRefused`):
 * a cursor it did not give (`CursorRefused`), or its filters, with the reason
 * and the way back to the whole list.
 */
export function QueryRefused({
  error,
  firstPage,
  unfiltered,
}: {
  error: AppError;
  firstPage: string;
  unfiltered: string;
}) {
  const { message } = error;
  if (isCursorRefused(error)) return <CursorRefused firstPage={firstPage} />;
  return (
    <p role="alert" className="notice notice-error" data-testid="filter-refused">
      These filters are not valid: {message} <Link href={unfiltered}>Clear the filters</Link>
    </p>
  );
}

/** A list page's filters: a GET form to the page itself, so a filtered view is a link. */
export function FilterForm({ label, children }: { label: string; children: ReactNode }) {
  return (
    <search aria-label={label}>
      <form className="filters">
        {children}
        <button type="submit" className="button">
          Apply
        </button>
      </form>
    </search>
  );
}

/**
 * A search parameter as one string: a repeated one (`?type=a&type=b`) arrives
 * as a list, which no form of Cairn's sends; it is read as absent.
 */
export function oneParam(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
