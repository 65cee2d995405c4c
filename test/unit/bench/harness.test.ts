import { describe, expect, it } from 'vitest';
import { parseHarnessArgs, UsageError } from '../../../bench/lib/args.ts';
import { formatRatio } from '../../../bench/lib/report.ts';
import { runEntries } from '../../../bench/lib/runner.ts';
import { median, percentile } from '../../../bench/lib/stats.ts';
import type { BenchEntry } from '../../../bench/lib/types.ts';

const entry = (id: string, file: string, extra: Partial<BenchEntry> = {}): BenchEntry => ({
  id,
  kind: 'scenario',
  file,
  title: id,
  options: { small: {}, default: {} },
  ...extra,
});

describe('bench statistics', () => {
  it.each([
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5, 5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95, 10],
    [[10, 1], 0.99, 10],
    [[], 0.5, 0],
  ])('percentile of %j at %d is %d (nearest rank)', (values, q, expected) => {
    expect(percentile(values, q)).toBe(expected);
  });

  it('median does not reorder its input', () => {
    const values = [3, 1, 2];
    expect(median(values)).toBe(2);
    expect(values).toEqual([3, 1, 2]);
  });
});

describe('npm run bench flags', () => {
  it('reads --only, --size and per-benchmark options in camelCase with numbers parsed', () => {
    const args = parseHarnessArgs([
      '--only',
      'status,read-path',
      '--size=small',
      '--read-path.page-size',
      '250',
      '--scale-out.workers',
      '1,2',
    ]);
    expect(args.only).toEqual(['status', 'read-path']);
    expect(args.size).toBe('small');
    expect(args.overrides).toEqual({ 'read-path': { pageSize: 250 }, 'scale-out': { workers: '1,2' } });
  });

  it.each([['--size', 'huge'], ['--bogus'], ['--only']])('refuses %j', (...argv) => {
    expect(() => parseHarnessArgs(argv)).toThrow(UsageError);
  });
});

describe('harness runner', () => {
  it('reports a missing module as not built yet, a throwing one with its error, and still runs the rest', async () => {
    const results = await runEntries(
      [
        entry('missing', 'no-such-benchmark.ts'),
        entry('throws', '../test/fixtures/bench/throws.ts'),
        entry('works', '../test/fixtures/bench/figures.ts'),
      ],
      { size: 'small', overrides: {} },
    );
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['missing', 'not built yet'],
      ['throws', 'error'],
      ['works', 'ok'],
    ]);
    expect(results[1]?.error).toMatch(/^RangeError: fixture failure/);
    expect(results[2]?.figures).toEqual({ 'items/s': 1000, note: 'fixed' });
  }, 60_000);

  it('divides a scenario figure by the baseline figure measured in the same run', async () => {
    const results = await runEntries(
      [
        entry('base', '../test/fixtures/bench/figures.ts', { kind: 'baseline' }),
        entry('scenario', '../test/fixtures/bench/figures.ts', {
          compare: [{ figure: 'items/s', baseline: 'base', baselineFigure: 'items/s', label: '× base' }],
        }),
      ],
      { size: 'small', overrides: { base: { rate: 400 } } },
    );
    const ratio = results[1]?.ratios?.[0];
    expect(ratio).toMatchObject({ value: 1000, baselineValue: 400, ratio: 2.5 });
    expect(ratio && formatRatio(ratio)).toBe('2.50 × base (400)');
  }, 60_000);
});
