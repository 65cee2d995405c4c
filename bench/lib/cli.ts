/**
 * Small command-line helpers for benchmarks that also run standalone.
 */
import { fileURLToPath } from 'node:url';
import type { Figures } from './types.ts';
import { formatTable } from './table.ts';

/** True when the module at `moduleUrl` is the script Node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === process.argv[1];
}

/** The positive number after `--name` on the command line, or undefined. */
export function readNumberFlag(name: string, argv: readonly string[] = process.argv): number | undefined {
  const index = argv.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Prints a title and a two-column table of figures. */
export function printFigures(title: string, figures: Figures): void {
  console.log(title);
  console.log(
    formatTable(
      ['figure', 'value'],
      Object.entries(figures).map(([k, v]) => [k, formatValue(v)]),
    ),
  );
}

/** A figure as it should read in a table: thousands separators for large numbers. */
export function formatValue(value: number | string | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (Number.isInteger(value) && Math.abs(value) >= 10_000) return value.toLocaleString('en-US');
  return String(value);
}
