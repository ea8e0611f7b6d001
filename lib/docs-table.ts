/**
 * A docs table as the tests that hold it to the code read it (docs/architecture.md,
 * "To add a …: touch these"): the rows of the table a header names, each a list
 * of trimmed cells, so each test compares the cells it cares about with the
 * code's registry or constants.
 */
import { readFileSync } from "node:fs";

/** A table line's cells, trimmed (a `\|` inside a cell is not a border). */
function cells(line: string): string[] {
  return line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.trim());
}

/**
 * The body rows of the table in `doc` whose header's first cell is
 * `firstHeader`, after the heading `under` when given (a doc may hold two
 * tables with the same first column). Throws when there is no such table, so a
 * renamed header fails the test that reads it rather than passing on nothing.
 */
export function docTable(doc: string, firstHeader: string, under?: string): string[][] {
  const lines = readFileSync(doc, "utf8").split("\n");
  const from = under === undefined ? 0 : lines.indexOf(under);
  const start = lines.findIndex(
    (line, index) => index > from && line.startsWith("|") && cells(line)[0] === firstHeader,
  );
  if (from === -1 || start === -1) {
    throw new Error(`${doc}: no table headed "${firstHeader}"${under ? ` under ${under}` : ""}`);
  }
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line));
  }
  return rows;
}

/** The names a cell gives in backticks: "`a`, `b` (c)" is a and b. */
export function codeNames(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
}
