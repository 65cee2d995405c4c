/**
 * Runs registry entries one by one, each in a fresh child process with a time limit, and turns what
 * comes back into results: figures, ratios against baselines of the same run, derived figures.
 * A missing module is "not built yet", a throwing or hanging one is reported, and the rest go on.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { ChildResult } from './child-runner.ts';
import { cleanupAfterProcess } from './cleanup.ts';
import { nowMs, round } from './stats.ts';
import type { BenchEntry, BenchSize, EntryResult, Figures, RatioResult } from './types.ts';

const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
const CHILD_RUNNER = fileURLToPath(new URL('./child-runner.ts', import.meta.url));

/** How to run the selected entries. */
export interface RunnerOptions {
  size: BenchSize;
  /** Per-entry option overrides from the command line, keyed by entry id. */
  overrides: Record<string, Record<string, unknown>>;
  /** Called when an entry starts (with an optional note) and when it ends (for progress output). */
  onProgress?: (entry: BenchEntry, result?: EntryResult, note?: string) => void;
}

/** The absolute path of an entry's module. */
export function entryPath(entry: BenchEntry): string {
  return `${BENCH_DIR}${entry.file}`;
}

type ChildOutcome = (ChildResult | { ok: false; error: string; timedOut: true }) & { pid: number };

function runChild(file: string, options: Record<string, unknown>, timeoutMs: number): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = fork(CHILD_RUNNER, [file, JSON.stringify(options)], {
      execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let settled: ChildResult | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('message', (message: unknown) => {
      settled = message as ChildResult;
    });
    const pid = child.pid ?? 0;
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (timedOut)
        resolve({ ok: false, error: `killed after ${Math.round(timeoutMs / 1000)} s`, timedOut: true, pid });
      else if (settled) resolve({ ...settled, pid });
      else
        resolve({
          ok: false,
          error: `exited (code ${code}, signal ${signal}) without a result\n${output.trim().split('\n').slice(-12).join('\n')}`,
          pid,
        });
    });
  });
}

function asNumber(value: number | string | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function computeRatios(
  entry: BenchEntry,
  figures: Figures,
  baselines: ReadonlyMap<string, MeasuredBaseline>,
): RatioResult[] {
  return (entry.compare ?? []).map((spec) => {
    const raw = asNumber(figures[spec.figure]);
    const value = raw === undefined ? undefined : raw * (spec.scale ?? 1);
    const measured = baselines.get(spec.baseline);
    const baselineValue = asNumber(measured?.figures[spec.baselineFigure]);
    const ratio =
      value !== undefined && baselineValue !== undefined && baselineValue !== 0 ? value / baselineValue : undefined;
    return {
      figure: spec.figure,
      value,
      baseline: spec.baseline,
      baselineFigure: spec.baselineFigure,
      baselineValue,
      baselineWhen: measured?.when,
      ratio,
      label: spec.label,
    };
  });
}

/** The latest figures of a baseline and when they were taken relative to the scenario. */
interface MeasuredBaseline {
  figures: Figures;
  when: 'just before' | 'earlier in the run';
}

function computeDerived(entry: BenchEntry, figures: Figures): Figures {
  const derived: Figures = {};
  for (const spec of entry.derive ?? []) {
    const value = spec.compute(figures);
    if (value !== undefined) derived[spec.name] = typeof value === 'number' ? round(value, value < 10 ? 2 : 0) : value;
  }
  return derived;
}

async function runOne(
  entry: BenchEntry,
  options: RunnerOptions,
  failed: Map<number, EntryResult>,
): Promise<EntryResult> {
  const runOptions = { ...entry.options[options.size], ...options.overrides[entry.id], print: false };
  const base = { id: entry.id, kind: entry.kind, title: entry.title, file: `bench/${entry.file}`, options: runOptions };
  if (!existsSync(entryPath(entry))) return { ...base, status: 'not built yet', seconds: 0 };
  const started = nowMs();
  const load = round(loadavg()[0] ?? 0, 2);
  const outcome = await runChild(entryPath(entry), runOptions, entry.timeoutMs ?? 300_000);
  const seconds = round((nowMs() - started) / 1000);
  if (outcome.ok)
    return {
      ...base,
      status: 'ok',
      seconds,
      loadAverage1m: load,
      figures: outcome.figures,
      derived: computeDerived(entry, outcome.figures),
    };
  // A killed or crashed child may not have run its own cleanup.
  const cleaned = outcome.pid > 0 ? await cleanupAfterProcess(outcome.pid) : '';
  const result: EntryResult = {
    ...base,
    status: 'timedOut' in outcome ? 'timed out' : 'error',
    seconds,
    loadAverage1m: load,
    error: cleaned ? `${outcome.error}\n(cleanup: ${cleaned})` : outcome.error,
  };
  if (outcome.pid > 0) failed.set(outcome.pid, result);
  return result;
}

/** Cleans up after failed children once more: Postgres or Redis may have been down the first time. */
async function sweepFailed(failed: ReadonlyMap<number, EntryResult>): Promise<void> {
  for (const [pid, result] of failed) {
    const cleaned = await cleanupAfterProcess(pid);
    if (cleaned !== '') result.error = `${result.error ?? ''}\n(cleanup at the end of the run: ${cleaned})`;
  }
}

/**
 * Runs `entries` in order (baselines first) and returns one result per entry. A baseline marked
 * `refresh` is measured again right before each scenario that compares with it, so that ratio and
 * figure come from the same minute of a shared, noisy machine. Scratch databases and Redis keys of
 * children that failed are removed right away and looked for again at the end.
 */
export async function runEntries(entries: readonly BenchEntry[], options: RunnerOptions): Promise<EntryResult[]> {
  const results: EntryResult[] = [];
  const baselines = new Map<string, MeasuredBaseline>();
  const failed = new Map<number, EntryResult>();
  for (const entry of entries) {
    if (entry.kind === 'scenario' && existsSync(entryPath(entry))) {
      for (const id of new Set((entry.compare ?? []).map((c) => c.baseline))) {
        const baseline = entries.find((e) => e.id === id && e.refresh === true);
        if (baseline === undefined || !baselines.has(id)) continue;
        options.onProgress?.(baseline, undefined, `again, for ${entry.id}`);
        const again = await runOne(baseline, options, failed);
        options.onProgress?.(baseline, again);
        if (again.figures) baselines.set(id, { figures: again.figures, when: 'just before' });
      }
    }
    options.onProgress?.(entry);
    const result = await runOne(entry, options, failed);
    if (result.figures && entry.compare) result.ratios = computeRatios(entry, result.figures, baselines);
    if (result.figures && entry.kind === 'baseline')
      baselines.set(entry.id, { figures: result.figures, when: 'earlier in the run' });
    results.push(result);
    options.onProgress?.(entry, result);
  }
  await sweepFailed(failed);
  return results;
}
