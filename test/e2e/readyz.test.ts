/**
 * `/readyz` is unauthenticated, so it answers a stable code per check and no error text (a driver's
 * message names the database host and port); the detail goes to the log, once per change of state.
 * The database here is a private PostgreSQL given to phaselog as an external DATABASE_URL: phaselog
 * reports it down and never restarts it.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testRedisUrl, uniquePrefix } from '../helpers/services.ts';
import { cleanEnv, exitCodeWithin, runPhaselog } from '../helpers/process.ts';
import type { PhaselogProcess } from '../helpers/process.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/runtime/embedded-postgres.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-readyz-'));
// As root the server runs as the postgres user, which must pass through this directory.
chmodSync(dir, 0o711);
const running: PhaselogProcess[] = [];
let server: EmbeddedPostgres;
beforeAll(async () => {
  server = await startEmbeddedPostgres({ stateDir: path.join(dir, 'external'), log: pino({ level: 'silent' }) });
});
afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function readyz(base: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, text: await res.text() };
}

function logLines(proc: PhaselogProcess): Record<string, unknown>[] {
  return proc
    .stdout()
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('/readyz', () => {
  it('answers codes without hosts or ports, logs the detail once, and leaves an external database alone', async () => {
    const { port } = new URL(server.url);
    const proc = runPhaselog(
      ['api'],
      cleanEnv({
        PHASELOG_STATE_DIR: path.join(dir, 'state'),
        PHASELOG_PORT: '0',
        DATABASE_URL: server.url,
        REDIS_URL: testRedisUrl(),
        PHASELOG_REDIS_PREFIX: uniquePrefix('readyz'),
      }),
    );
    running.push(proc);
    const base = String((await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000)).graphql).replace(
      /\/graphql$/,
      '',
    );
    expect(JSON.parse((await readyz(base)).text)).toEqual({
      status: 'ready',
      checks: { database: { ok: true }, redis: { ok: true }, migrations: { ok: true } },
    });

    // A migration the database no longer records as applied.
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query(
      'DELETE FROM _prisma_migrations WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)',
    );
    await client.end();
    const pending = await readyz(base);
    expect(pending.status).toBe(503);
    expect(JSON.parse(pending.text)).toEqual({
      status: 'not ready',
      checks: { database: { ok: true }, redis: { ok: true }, migrations: { ok: false, code: 'MIGRATIONS_PENDING' } },
    });

    await server.stop();
    const answers = [await readyz(base), await readyz(base), await readyz(base)];
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text)).toEqual({
        status: 'not ready',
        checks: {
          database: { ok: false, code: 'UNAVAILABLE' },
          redis: { ok: true },
          migrations: { ok: false, code: 'UNAVAILABLE' },
        },
      });
      expect(answer.text).not.toContain('127.0.0.1');
      expect(answer.text).not.toContain(port);
    }

    // The detail is in the log, once for three probes; and nobody restarts a server phaselog does not own.
    const failing = logLines(proc).filter((l) => l.msg === 'readiness check failing' && l.check === 'database');
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ level: 40, code: 'UNAVAILABLE' });
    expect(JSON.stringify(failing[0])).toMatch(/Can't reach database server|ECONNREFUSED|terminat/i);
    expect(logLines(proc).filter((l) => l.part === 'embedded-postgres')).toEqual([]);

    proc.child.kill('SIGTERM');
    expect(await exitCodeWithin(proc, 15_000)).toBe(0);
    server = await startEmbeddedPostgres({ stateDir: path.join(dir, 'external'), log: pino({ level: 'silent' }) });
  }, 120_000);

  it('phaselog migrate with a wrong password is one line', async () => {
    const url = new URL(server.url);
    url.password = 'not-the-password';
    const proc = runPhaselog(['migrate'], cleanEnv({ DATABASE_URL: url.toString() }));
    expect(await exitCodeWithin(proc, 30_000)).toBe(1);
    expect(proc.stderr()).toMatch(
      /^phaselog: cannot connect to PostgreSQL at 127\.0\.0\.1:\d+\/phaselog: password authentication failed for user "postgres"\n$/,
    );
    expect(proc.stderr()).not.toContain('not-the-password');
  }, 60_000);
});
