import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/errors.ts';
import {
  colourWanted,
  formatAgo,
  formatRef,
  formatResourceKey,
  paintStatus,
  painter,
  parseCliDuration,
  parseTime,
  renderData,
  renderList,
  renderStreamItem,
  renderTable,
} from '../../../src/cli/format.ts';

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
    expect(
      renderTable(
        ['NAME', 'STATUS', 'MESSAGE'],
        [
          ['shop', 'Current', 'Resource is current'],
          ['checkout-api', 'Failed', '1 pods have failed'],
        ],
      ),
    ).toBe(
      'NAME          STATUS   MESSAGE\nshop          Current  Resource is current\ncheckout-api  Failed   1 pods have failed\n',
    );
  });

  it('renders JSON and YAML for machines', () => {
    expect(renderData({ a: [1] }, 'json')).toBe('{\n  "a": [\n    1\n  ]\n}\n');
    expect(renderData({ a: [1] }, 'yaml')).toBe('a:\n  - 1\n');
  });

  it('prints lists as kubectl does, a List with items, and streams one item per line or document', () => {
    expect(JSON.parse(renderList([{ name: 'a' }], 'json'))).toEqual({ kind: 'List', items: [{ name: 'a' }] });
    expect(renderStreamItem({ seq: '7', status: 'Failed' }, 'json')).toBe('{"seq":"7","status":"Failed"}\n');
    expect(renderStreamItem({ seq: '7' }, 'yaml')).toBe('---\nseq: "7"\n');
  });

  it('leaves out the header row with --no-headers, and lines up rows printed later', () => {
    expect(renderTable(['NAME', 'STATUS'], [['shop', 'Current']], { headers: false })).toBe('shop  Current\n');
    expect(renderTable(['NAME', 'STATUS'], [['a', 'Failed']], { headers: false, minWidths: [12, 7] })).toBe(
      'a             Failed\n',
    );
  });

  it('pads coloured cells by what the terminal shows, not by their escape codes', () => {
    const paint = painter(true);
    const table = renderTable(
      ['STATUS', 'NAME'],
      [
        [paintStatus('Failed', paint, true), 'a'],
        [paintStatus('Current', paint, true), 'b'],
      ],
    );
    // eslint-disable-next-line no-control-regex
    const plain = table.replace(/\x1b\[[0-9;]*m/g, '');
    expect(plain).toBe('STATUS     NAME\n✘ Failed   a\n✔ Current  b\n');
    expect(table).toContain('\x1b[31m✘ Failed\x1b[39m');
  });

  it('colours only on a terminal, never with NO_COLOR or TERM=dumb, and when FORCE_COLOR asks', () => {
    expect(colourWanted({ isTTY: true }, {})).toBe(true);
    expect(colourWanted({ isTTY: false }, {})).toBe(false);
    expect(colourWanted({}, {})).toBe(false);
    expect(colourWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colourWanted({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(colourWanted({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colourWanted({ isTTY: true }, { FORCE_COLOR: '0', NO_COLOR: '1' })).toBe(false);
    expect(paintStatus('Failed', painter(false), false)).toBe('Failed');
  });

  it.each([
    ['apps/Deployment/shop/web', 'apps/Deployment/shop/web'],
    ['/Pod/shop/worker-0', 'Pod/shop/worker-0'],
    ['rbac.authorization.k8s.io/ClusterRole//admin', 'rbac.authorization.k8s.io/ClusterRole/admin'],
    ['/Namespace//shop', 'Namespace/shop'],
  ])('names the resource key %s as %s, the one ref format', (key, ref) => {
    expect(formatResourceKey(key)).toBe(ref);
    const [group, kind, namespace, name] = key.split('/') as [string, string, string, string];
    expect(formatRef({ group, kind, namespace, name })).toBe(ref);
  });

  it.each([
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
  ])('reads the duration %s', (text, ms) => expect(parseCliDuration(text, '--for')).toBe(ms));

  it.each([
    ['600', /a number needs a unit: 600s, 600m/],
    ['-5m', /positive duration/],
    ['0s', /positive duration/],
    ['soon', /such as 30s, 10m or 1h/],
    ['', /positive duration/],
  ])('refuses the duration %j with a usage error', (text, message) => {
    let error: unknown;
    try {
      parseCliDuration(text, '--for');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toMatch(message);
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
