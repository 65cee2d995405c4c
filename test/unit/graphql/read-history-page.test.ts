/** A history page's intervals from the column arrays PostgreSQL sends for it. */
import { describe, expect, it } from 'vitest';
import { toIntervalPage } from '../../../src/store/read-history.ts';

const T = Date.parse('2026-01-01T00:00:00.000Z');

describe('history page columns', () => {
  it('give the intervals with their times, the open one last', () => {
    expect(
      toIntervalPage(
        [
          ['InProgress', 'Current'],
          [false, true],
          [T, T + 600_123],
          [T + 600_123, null],
        ],
        { detail: false },
      ),
    ).toEqual([
      {
        id: String(T),
        status: 'InProgress',
        stale: false,
        unobserved: false,
        from: new Date(T),
        to: new Date(T + 600_123),
        detail: undefined,
      },
      {
        id: String(T + 600_123),
        status: 'Current',
        stale: true,
        unobserved: false,
        from: new Date(T + 600_123),
        to: null,
        detail: undefined,
      },
    ]);
  });

  it('mark the intervals no snapshot observed (the last column, after the detail or its NULLs)', () => {
    const page = toIntervalPage(
      [
        ['Current', 'Current', 'Current'],
        [false, true, false],
        [T, T + 1, T + 2],
        [T + 1, T + 2, null],
        null,
        null,
        null,
        [false, true, false],
      ],
      { detail: false },
    );
    expect(page.map((i) => [i.stale, i.unobserved])).toEqual([
      [false, false],
      [true, true],
      [false, false],
    ]);
  });

  it('give the detail when it was read, with defaults for what a detail left out', () => {
    const page = toIntervalPage(
      [
        ['Failed', 'Current'],
        [false, false],
        [T, T + 1],
        [T + 1, null],
        ['crash loop', null],
        [{ Failed: 1 }, null],
        ['apps/Deployment/shop/web', null],
      ],
      { detail: true },
    );
    expect(page.map((i) => i.detail)).toEqual([
      { message: 'crash loop', summary: { Failed: 1 }, worstResource: 'apps/Deployment/shop/web' },
      { message: '', summary: {}, worstResource: null },
    ]);
  });

  it('are in the order of their start even when the arrays are not', () => {
    const page = toIntervalPage(
      [
        ['C', 'A', 'B'],
        [false, false, false],
        [T + 2, T, T + 1],
        [null, T + 1, T + 2],
      ],
      { detail: false },
    );
    expect(page.map((i) => i.status)).toEqual(['A', 'B', 'C']);
    expect(page.map((i) => i.to?.getTime() ?? null)).toEqual([T + 1, T + 2, null]);
  });

  it('are none for an empty page (PostgreSQL aggregates nothing to null)', () => {
    expect(toIntervalPage([null, null, null, null], { detail: false })).toEqual([]);
    expect(toIntervalPage([null, null, null, null, null, null, null], { detail: true })).toEqual([]);
  });
});
