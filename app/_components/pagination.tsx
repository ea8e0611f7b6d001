import Link from "next/link";

/** Previous/next links that keep the page's other query parameters. */
export function Pagination({
  page,
  pageSize,
  total,
  basePath,
  params,
  pageParam = "page",
  label,
}: {
  page: number;
  pageSize: number;
  total: number;
  basePath: string;
  params: Record<string, string | undefined>;
  pageParam?: string;
  label: string;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (pages <= 1) return null;
  const href = (target: number) => {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value) query.set(key, value);
    query.set(pageParam, String(target));
    return `${basePath}?${query.toString()}`;
  };
  return (
    <nav className="pagination" aria-label={label}>
      {page > 1 ? <Link href={href(page - 1)}>← Newer</Link> : <span aria-hidden="true" />}
      <span>
        Page {page} of {pages}
      </span>
      {page < pages ? <Link href={href(page + 1)}>Older →</Link> : <span aria-hidden="true" />}
    </nav>
  );
}
