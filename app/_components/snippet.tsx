/** A search snippet whose matched terms search_sources marks with `**`: shown as <mark>, never as HTML. */
export function Snippet({ text }: { text: string }) {
  const parts = text.split("**");
  return (
    <span className="snippet">
      {parts.map((part, index) =>
        // Odd pieces sit between a pair of markers.
        index % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one string never reorder
          <mark key={index}>{part}</mark>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one string never reorder
          <span key={index}>{part}</span>
        ),
      )}
    </span>
  );
}
