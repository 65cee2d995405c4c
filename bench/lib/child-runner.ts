/**
 * Runs one benchmark module in its own process for the harness:
 *
 *   node --import tsx bench/lib/child-runner.ts <module path> '<options as JSON>'
 *
 * It imports the module, awaits `run(options)` and sends `{ ok: true, figures }` or
 * `{ ok: false, error }` to the parent over IPC, then exits even if the module left handles open.
 */
import { pathToFileURL } from 'node:url';
import type { Figures } from './types.ts';

/** The message sent back to the harness. */
export type ChildResult = { ok: true; figures: Figures } | { ok: false; error: string };

function describe(error: unknown): string {
  if (error instanceof Error)
    return `${error.name}: ${error.message}${error.stack ? `\n${error.stack.split('\n').slice(1, 6).join('\n')}` : ''}`;
  return String(error);
}

function isFigures(value: unknown): value is Figures {
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.values(value).every((v) => typeof v === 'number' || typeof v === 'string')
  );
}

async function runModule(file: string, options: Record<string, unknown>): Promise<ChildResult> {
  try {
    const mod = (await import(pathToFileURL(file).href)) as { run?: unknown };
    if (typeof mod.run !== 'function') return { ok: false, error: `${file} exports no run() function` };
    const figures: unknown = await (mod.run as (o: Record<string, unknown>) => Promise<unknown>)(options);
    if (!isFigures(figures))
      return { ok: false, error: `${file}: run() did not return a record of numbers and strings` };
    return { ok: true, figures };
  } catch (error) {
    return { ok: false, error: describe(error) };
  }
}

const [file, optionsJson] = process.argv.slice(2);
const result: ChildResult =
  file === undefined
    ? { ok: false, error: 'child-runner needs a module path' }
    : await runModule(file, JSON.parse(optionsJson ?? '{}') as Record<string, unknown>);
process.send?.(result, () => process.exit(0));
