import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/errors.ts';
import { formatAgo, parseOutputFormat, parseTime, renderData, renderTable } from '../../../src/cli/format.ts';

const now = new Date('2026-11-22T12:00:00Z');

describe('CLI formatting', () => {
  it.each([
    ['2026-11-22T11:55:00Z', '5m ago'],
    ['2026-11-22T09:57:00Z', '2h3m ago'],
    ['2026-11-20T08:00:00Z', '2d4h ago'],
    ['2026-11-22T11:59:59.500Z', 'just now'],
    ['2026-11-22T12:05:00Z', 'in 5m'],
  ])('shows %s as "%s"', (time, text) => expect(formatAgo(time, now)).toBe(text));

  it('shows a missing time as a dash', () => expect(formatAgo(null, now)).toBe('-'));

  it('pads table columns like flux get', () => {
    expect(renderTable(['NAME', 'STATUS', 'MESSAGE'], [['shop', 'Current', 'Resource is current'], ['checkout-api', 'Failed', '1 pods have failed']])).toBe(
      'NAME          STATUS   MESSAGE\nshop          Current  Resource is current\ncheckout-api  Failed   1 pods have failed\n',
    );
  });

  it('renders JSON and YAML for machines', () => {
    expect(renderData({ a: [1] }, 'json')).toBe('{\n  "a": [\n    1\n  ]\n}\n');
    expect(renderData({ a: [1] }, 'yaml')).toBe('a:\n  - 1\n');
    expect(() => parseOutputFormat('xml')).toThrow(CliError);
  });

  it.each([
    ['2026-11-17T14:00:00Z', '2026-11-17T14:00:00.000Z'],
    ['2026-11-17T14:00:00+01:00', '2026-11-17T13:00:00.000Z'],
    ['2026-11-17', '2026-11-17T00:00:00.000Z'],
    ['now', '2026-11-22T12:00:00.000Z'],
    ['90m', '2026-11-22T10:30:00.000Z'],
    ['7d', '2026-11-15T12:00:00.000Z'],
  ])('parses the time %s', (text, iso) => expect(parseTime(text, now).toISOString()).toBe(iso));

  it.each(['yesterday', '17/11/2026', '2026-13-45', '12'])('rejects the time %j with a usage error', (text) => {
    expect(() => parseTime(text, now)).toThrow(/is not a time/);
  });
});
