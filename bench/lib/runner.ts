/**
 * Runs registry entries one by one, each in a fresh child process with a time limit, and turns what
 * comes back into results: figures, ratios against baselines of the same run, derived figures.
 * A missing module is "not built yet", a throwing or hanging one is reported, and the rest go on.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
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
  /** Called when an entry starts and when it ends (for progress output). */
  onProgress?: (entry: BenchEntry, result?: EntryResult) => void;
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
      if (timedOut) resolve({ ok: false, error: `killed after ${Math.round(timeoutMs / 1000)} s`, timedOut: true, pid });
      else if (settled) resolve({ ...settled, pid });
      else resolve({ ok: false, error: `exited (code ${code}, signal ${signal}) without a result\n${output.trim().split('\n').slice(-12).join('\n')}`, pid });
    });
  });
}

function asNumber(value: number | string | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function computeRatios(entry: BenchEntry, figures: Figures, done: ReadonlyMap<string, EntryResult>): RatioResult[] {
  return (entry.compare ?? []).map((spec) => {
    const value = asNumber(figures[spec.figure]);
    const baselineValue = asNumber(done.get(spec.baseline)?.figures?.[spec.baselineFigure]);
    const ratio = value !== undefined && baselineValue !== undefined && baselineValue !== 0 ? value / baselineValue : undefined;
    return { figure: spec.figure, value, baseline: spec.baseline, baselineFigure: spec.baselineFigure, baselineValue, ratio, label: spec.label };
  });
}

function computeDerived(entry: BenchEntry, figures: Figures): Figures {
  const derived: Figures = {};
  for (const spec of entry.derive ?? []) {
    const value = spec.compute(figures);
    if (value !== undefined) derived[spec.name] = typeof value === 'number' ? round(value, value < 10 ? 2 : 0) : value;
  }
  return derived;
}

/** Runs `entries` in order (baselines should come first) and returns one result per entry. */
export async function runEntries(entries: readonly BenchEntry[], options: RunnerOptions): Promise<EntryResult[]> {
  const done = new Map<string, EntryResult>();
  for (const entry of entries) {
    const runOptions = { ...entry.options[options.size], ...options.overrides[entry.id], print: false };
    const base = { id: entry.id, kind: entry.kind, title: entry.title, file: `bench/${entry.file}`, options: runOptions };
    options.onProgress?.(entry);
    let result: EntryResult;
    if (!existsSync(entryPath(entry))) {
      result = { ...base, status: 'not built yet', seconds: 0 };
    } else {
      const started = nowMs();
      const outcome = await runChild(entryPath(entry), runOptions, entry.timeoutMs ?? 300_000);
      const seconds = round((nowMs() - started) / 1000);
      if (outcome.ok) {
        result = { ...base, status: 'ok', seconds, figures: outcome.figures, derived: computeDerived(entry, outcome.figures), ratios: computeRatios(entry, outcome.figures, done) };
      } else {
        // A killed or crashed child may not have run its own cleanup.
        const cleaned = outcome.pid > 0 ? await cleanupAfterProcess(outcome.pid) : '';
        result = { ...base, status: 'timedOut' in outcome ? 'timed out' : 'error', seconds, error: cleaned ? `${outcome.error}\n(cleanup: ${cleaned})` : outcome.error };
      }
    }
    done.set(entry.id, result);
    options.onProgress?.(entry, result);
  }
  return [...done.values()];
}
