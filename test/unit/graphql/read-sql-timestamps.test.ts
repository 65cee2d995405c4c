/** The read side's timestamptz parser gives what pg's own parser gives, faster for UTC text. */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from '../../../src/store/read-sql.ts';

const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => Date | number;

describe('parseTimestamptz', () => {
  it.each([
    ['whole seconds', '2026-11-22 09:00:00+00'],
    ['milliseconds', '2026-11-22 09:00:00.123+00'],
    ['tenths (trailing zeros trimmed)', '2026-11-22 09:00:00.1+00'],
    ['hundredths', '2026-11-22 23:59:59.12+00'],
    ['leading zeros in the fraction', '2026-01-01 00:00:00.05+00'],
    ['one millisecond', '2026-01-01 00:00:00.001+00'],
    ['the last millisecond of a year', '2025-12-31 23:59:59.999+00'],
    ['a leap day', '2028-02-29 12:00:00.5+00'],
    ['microseconds (pg parser)', '2026-11-22 09:00:00.123456+00'],
    ['another session time zone (pg parser)', '2026-11-22 10:00:00.123+01'],
    ['a half-hour offset (pg parser)', '2026-11-22 14:30:00+05:30'],
    ['a year before 1000 (pg parser)', '0999-01-01 00:00:00+00'],
    ['BC (pg parser)', '0044-03-15 12:00:00+00 BC'],
  ])('%s', (_name, text) => {
    const ours = parseTimestamptz(text);
    const theirs = pgParse(text);
    expect(ours instanceof Date ? ours.getTime() : ours).toBe(theirs instanceof Date ? theirs.getTime() : theirs);
  });

  it('leaves infinity to pg', () => {
    expect(parseTimestamptz('infinity')).toBe(pgParse('infinity'));
    expect(parseTimestamptz('-infinity')).toBe(pgParse('-infinity'));
  });
});
