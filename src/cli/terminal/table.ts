import { padEnd, truncate, visibleWidth } from './text';

/**
 * Rows as aligned columns with a header, for list commands. The last column is cut to fit
 * `maxWidth` (the terminal's width) when the others leave it room; otherwise lines run long
 * rather than losing an id.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], maxWidth = Infinity): string[] {
  const widths = header.map((title, column) => Math.max(visibleWidth(title), ...rows.map((row) => visibleWidth(row[column] ?? ''))));
  const lastStart = widths.slice(0, -1).reduce((sum, width) => sum + width + 2, 0);
  const lastWidth = Math.max(10, Math.min(widths.at(-1) ?? 0, maxWidth - lastStart));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? truncate(cell, lastWidth) : padEnd(cell, widths[column]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
