import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { formatDuration, parseDuration } from '../../../src/duration.ts';
import { dirWith, issuesOf } from '../../helpers/config.ts';

describe('loadConfig', () => {
  it('needs nothing: embedded defaults bound to loopback', () => {
    const dir = dirWith();
    const config = loadConfig({}, dir);
    expect(config).toMatchObject({
      role: 'all',
      server: { host: '127.0.0.1', port: 4000 },
      database: {},
      redis: {},
      snapshot: { interval: 30_000, live: true, keepState: true, watchBackoffMax: 5_000 },
      stateDir: path.join(dir, '.phaselog'),
      clusters: [],
    });
    expect(config.configFile).toBeUndefined();
  });

  it('reads phaselog.yaml from the working directory and lets env vars win', () => {
    const dir = dirWith(
      'server:\n  port: 5000\n  host: 0.0.0.0\nsnapshot:\n  interval: 1m\n  keepState: false\nlog:\n  level: debug\n',
    );
    const config = loadConfig({ PHASELOG_PORT: '6000', DATABASE_URL: 'postgresql://u:p@db:5432/x' }, dir);
    expect(config.server).toEqual({ host: '0.0.0.0', port: 6000 });
    expect(config.snapshot.interval).toBe(60_000);
    expect(config.snapshot.keepState).toBe(false);
    expect(config.log.level).toBe('debug');
    expect(config.database.url).toBe('postgresql://u:p@db:5432/x');
    expect(config.configFile).toBe(path.join(dir, 'phaselog.yaml'));
  });

  it('reads the watch backoff cap as a duration', () => {
    expect(loadConfig({}, dirWith('snapshot:\n  watchBackoffMax: 2s\n')).snapshot.watchBackoffMax).toBe(2_000);
  });

  it('takes command-line overrides over env vars', () => {
    expect(loadConfig({ PHASELOG_PORT: '6000' }, dirWith(), { 'server.port': '7000' }).server.port).toBe(7000);
  });

  it('reads the file named by PHASELOG_CONFIG and resolves the state dir from the working directory', () => {
    const dir = dirWith();
    const file = path.join(dir, 'custom.yaml');
    writeFileSync(file, 'stateDir: data\nrole: worker\n');
    const config = loadConfig({ PHASELOG_CONFIG: file }, dir);
    expect(config.role).toBe('worker');
    expect(config.stateDir).toBe(path.join(dir, 'data'));
  });

  it.each([
    ['an unknown yaml key', 'servr:\n  port: 1\n', {}, 'servr'],
    ['a port that is not a number', '', { PHASELOG_PORT: 'abc' }, 'PHASELOG_PORT (server.port)'],
    ['a DATABASE_URL that is not PostgreSQL', '', { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL (database.url)'],
    ['a REDIS_URL that is not Redis', '', { REDIS_URL: 'http://x' }, 'REDIS_URL (redis.url)'],
    ['a bad duration', 'snapshot:\n  interval: soon\n', {}, 'snapshot.interval'],
    [
      'a watch backoff cap that is not a duration',
      'snapshot:\n  watchBackoffMax: never\n',
      {},
      'snapshot.watchBackoffMax',
    ],
    ['a watch backoff cap of zero', 'snapshot:\n  watchBackoffMax: 0\n', {}, 'snapshot.watchBackoffMax'],
    ['a negative watch backoff cap', 'snapshot:\n  watchBackoffMax: -1s\n', {}, 'snapshot.watchBackoffMax'],
    ['a watch backoff cap longer than 5m', 'snapshot:\n  watchBackoffMax: 1h\n', {}, 'snapshot.watchBackoffMax'],
    ['an unknown role', '', { PHASELOG_ROLE: 'boss' }, 'PHASELOG_ROLE (role)'],
    ['an unknown PHASELOG_ variable', '', { PHASELOG_PROT: '1' }, 'PHASELOG_PROT'],
    [
      'a cluster entry with two modes',
      'clusters:\n  - name: a\n    server: https://x\n    inCluster: true\n',
      {},
      'clusters.0',
    ],
    ['YAML that is not a mapping', '- a\n- b\n', {}, 'phaselog.yaml'],
  ])('names the key for %s', (_what, yaml, env, key) => {
    const dir = dirWith(yaml || undefined);
    const issues = issuesOf(() => loadConfig(env as Record<string, string>, dir));
    expect(issues.map((i) => i.key).some((k) => k === key || k.endsWith(key))).toBe(true);
    expect(issues.every((i) => i.message.length > 0)).toBe(true);
  });

  it('reports every bad key at once, not only the first', () => {
    const issues = issuesOf(() => loadConfig({ PHASELOG_PORT: 'x', REDIS_URL: 'nope' }, dirWith('bogus: 1\n')));
    expect(issues.map((i) => i.key)).toEqual(
      expect.arrayContaining(['bogus', 'PHASELOG_PORT (server.port)', 'REDIS_URL (redis.url)']),
    );
  });

  it('reports an unreadable PHASELOG_CONFIG', () => {
    const issues = issuesOf(() => loadConfig({ PHASELOG_CONFIG: '/nonexistent/phaselog.yaml' }, dirWith()));
    expect(issues[0]?.key).toBe('PHASELOG_CONFIG');
    expect(issues[0]?.message).toContain('cannot read');
  });
});

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
    ['250', 250],
    ['1.5s', 1500],
  ])('parses %s', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'soon', '5 minutes', '-1s', '1y'])('rejects %j', (text) => expect(parseDuration(text)).toBeUndefined());

  it.each([
    [45_000, '45s'],
    [300_000, '5m'],
    [7_500_000, '2h5m'],
    [273_600_000, '3d4h'],
  ])('formats %d ms as %s', (ms, text) => expect(formatDuration(ms)).toBe(text));
});

describe('report schedules', () => {
  it('reads reports.schedules with defaults', () => {
    const config = loadConfig(
      {},
      dirWith('reports:\n  schedules:\n    - name: weekly-prod\n      every: 7d\n      clusters: [prod]\n'),
    );
    expect(config.reports.schedules).toEqual([
      { name: 'weekly-prod', every: '7d', format: 'html', clusters: ['prod'], namespaces: [], phases: [] },
    ]);
  });

  it('names a bad schedule key', () => {
    const issues = issuesOf(() =>
      loadConfig({}, dirWith('reports:\n  schedules:\n    - name: bad name\n      every: often\n')),
    );
    expect(issues.map((i) => i.key).sort()).toEqual(['reports.schedules.0.every', 'reports.schedules.0.name']);
  });
});
