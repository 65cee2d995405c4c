/** A bad DATABASE_URL, an unreachable Redis or an invalid config key: one clear line, non-zero exit. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testRedisUrl } from '../helpers/services.ts';
import type { TestDatabase } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('startup_errors');
});
afterAll(async () => {
  await db.drop();
});

function configFile(yaml: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'phaselog-bad-config-')), 'phaselog.yaml');
  writeFileSync(file, yaml);
  return file;
}

async function failingStart(env: Record<string, string>): Promise<{ code: number | string; stderr: string }> {
  const proc = runPhaselog(
    ['start'],
    cleanEnv({ PHASELOG_PORT: '0', PHASELOG_STATE_DIR: mkdtempSync(path.join(tmpdir(), 'phaselog-state-')), ...env }),
  );
  const code = await exitCodeWithin(proc, 30_000);
  return { code, stderr: proc.stderr() };
}

describe('start-up failures are one clear line', () => {
  it.each([
    [
      'a PostgreSQL server that does not answer',
      () => ({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/phaselog', REDIS_URL: testRedisUrl() }),
      1,
      /^phaselog: cannot connect to PostgreSQL at 127\.0\.0\.1:1\/phaselog: /,
    ],
    [
      'a Redis that does not answer',
      () => ({ DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:1' }),
      1,
      /^phaselog: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(REDIS_URL\): /,
    ],
    [
      'a DATABASE_URL that is not PostgreSQL',
      () => ({ DATABASE_URL: 'mysql://root@localhost/x' }),
      2,
      /^phaselog: invalid configuration\n {2}DATABASE_URL \(database\.url\): must be a postgres/,
    ],
    ['a port that is not a number', () => ({ PHASELOG_PORT: 'http' }), 2, /PHASELOG_PORT \(server\.port\)/],
    [
      'an unknown key in phaselog.yaml',
      () => ({ PHASELOG_CONFIG: configFile('server:\n  prot: 4000\n') }),
      2,
      /server\.prot: unknown key/,
    ],
  ])('%s', async (_what, env, expectedCode, message) => {
    const { code, stderr } = await failingStart(env());
    expect(code).toBe(expectedCode);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('never prints the database password', async () => {
    const { stderr } = await failingStart({
      DATABASE_URL: 'postgresql://postgres:s3cret-pw@127.0.0.1:1/phaselog',
      REDIS_URL: testRedisUrl(),
    });
    expect(stderr).toContain('cannot connect to PostgreSQL');
    expect(stderr).not.toContain('s3cret-pw');
  });
});

describe('phaselog migrate against a bad DATABASE_URL', () => {
  it.each([
    [
      'a server that does not answer',
      'postgresql://postgres@127.0.0.1:1/phaselog',
      1,
      /^phaselog: cannot connect to PostgreSQL at 127\.0\.0\.1:1\/phaselog: connect ECONNREFUSED/,
    ],
    [
      'a host that does not exist',
      'postgresql://postgres@no-such-host.invalid/phaselog',
      1,
      /^phaselog: cannot connect to PostgreSQL at no-such-host\.invalid:5432\/phaselog: getaddrinfo/,
    ],
    [
      'a role the server does not know',
      'postgresql://no_such_role:pw@127.0.0.1:5432/phaselog',
      1,
      /^phaselog: cannot connect to PostgreSQL at 127\.0\.0\.1:5432\/phaselog: role "no_such_role" does not exist/,
    ],
    [
      'a URL with a broken escape',
      'postgresql://%zz@127.0.0.1/phaselog',
      1,
      /^phaselog: DATABASE_URL is not a usable PostgreSQL URL: /,
    ],
    [
      'a string that is not a URL',
      'garbage',
      2,
      /^phaselog: invalid configuration: DATABASE_URL \(database\.url\): must be a postgres/,
    ],
  ])('%s: one line, non-zero exit', async (_what, url, expectedCode, message) => {
    const proc = runPhaselog(['migrate'], cleanEnv({ DATABASE_URL: url }));
    expect(await exitCodeWithin(proc, 30_000)).toBe(expectedCode);
    expect(proc.stderr()).toMatch(message);
    expect(proc.stderr().trimEnd().split('\n')).toHaveLength(1);
    expect(proc.stderr()).not.toMatch(/wasm/i);
    expect(proc.stdout()).toBe('');
  });
});
