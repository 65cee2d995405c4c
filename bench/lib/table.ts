/**
 * Plain-text and Markdown tables for benchmark output.
 */

/** Right-aligns cells that look like numbers, left-aligns the rest. */
function isNumeric(cell: string): boolean {
  return /^[-+]?[\d,]*\.?\d+(e[-+]?\d+)?\s*[×%]?$/i.test(cell.trim());
}

/** Renders rows as an aligned plain-text table with a header rule. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (isNumeric(cell) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Renders rows as a GitHub-flavoured Markdown table (pipes in cells escaped). */
export function formatMarkdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const line = (cells: readonly string[]) => `| ${cells.map(escape).join(' | ')} |`;
  const rule = `| ${header.map((_, i) => (rows.some((r) => isNumeric(r[i] ?? '')) ? '---:' : '---')).join(' | ')} |`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}
