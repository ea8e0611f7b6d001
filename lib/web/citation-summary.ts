/**
 * How many sources the deliverable cites and how many of those the plan read,
 * in words that cannot be read as a count of the plan's sources (Evidence, beside
 * it, counts those) and that claim nothing when nothing is cited.
 */
export function citationSummary(cited: number, read: number): string {
  if (cited === 0) return "the deliverable cites no source.";
  const sources = cited === 1 ? "1 source" : `${cited} sources`;
  const readPart =
    read === cited
      ? cited === 1
        ? "read by this plan"
        : "all read by this plan"
      : read === 0
        ? "none of them read by this plan"
        : `${read} of them read by this plan`;
  return `the deliverable cites ${sources}, ${readPart}.`;
}
