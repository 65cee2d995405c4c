import { describe, expect, it } from 'vitest';
import { timeAxisTicks } from '../../../src/reports/time-axis.ts';
import { HOUR, MINUTE, T0 } from '../../fixtures/reports/histories.ts';

const labels = (from: number, to: number, maxTicks = 9) => timeAxisTicks(from, to, maxTicks).map((tick) => tick.label);

describe('timeAxisTicks: round UTC steps a person reads at a glance', () => {
  it.each<[string, number, number, string[]]>([
    [
      'an hour gets a tick every 10 minutes',
      T0,
      T0 + HOUR,
      ['10-01 00:00', '00:10', '00:20', '00:30', '00:40', '00:50', '01:00'],
    ],
    [
      'a range off the grid starts at the first round time inside it, with its date',
      T0 + 7 * MINUTE,
      T0 + 52 * MINUTE,
      ['10-01 00:10', '00:20', '00:30', '00:40', '00:50'],
    ],
    [
      'a day gets a tick every 3 hours, the date again at midnight',
      T0,
      T0 + 24 * HOUR,
      ['10-01 00:00', '03:00', '06:00', '09:00', '12:00', '15:00', '18:00', '21:00', '10-02 00:00'],
    ],
    [
      'a week gets a tick a day, labelled by date',
      T0,
      T0 + 7 * 24 * HOUR,
      ['10-01', '10-02', '10-03', '10-04', '10-05', '10-06', '10-07', '10-08'],
    ],
  ])('%s', (_name, from, to, expected) => {
    expect(labels(from, to)).toEqual(expected);
  });

  it('never gives more ticks than asked, whatever the range', () => {
    for (const span of [MINUTE, 45 * MINUTE, 5 * HOUR, 36 * HOUR, 30 * 24 * HOUR, 400 * 24 * HOUR]) {
      const ticks = timeAxisTicks(T0 + 13 * MINUTE, T0 + 13 * MINUTE + span, 9);
      expect(ticks.length).toBeGreaterThan(0);
      expect(ticks.length).toBeLessThanOrEqual(9);
    }
  });

  it('gives an empty range no ticks', () => {
    expect(timeAxisTicks(T0, T0, 9)).toEqual([]);
  });
});
