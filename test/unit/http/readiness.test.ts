import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createReadiness, ReadinessError } from '../../../src/http/readiness.ts';

function capture(): { log: pino.Logger; lines: () => Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split('\n'))
        if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines: () => lines };
}

const never = () => new Promise<void>(() => {});

describe('readiness checks', () => {
  it.each([
    ['passes', async () => {}, { ok: true }],
    [
      'throws a ReadinessError with its own code',
      async () => Promise.reject(new ReadinessError('RECORDING_STOPPED', 'no scheduler for demo-prod')),
      { ok: false, code: 'RECORDING_STOPPED' },
    ],
    [
      'throws any other error',
      async () => Promise.reject(new Error("Can't reach database server at 10.0.0.5:5432")),
      { ok: false, code: 'UNAVAILABLE' },
    ],
    ['throws a non-error', async () => Promise.reject('down'), { ok: false, code: 'UNAVAILABLE' }],
    ['does not answer in time', never, { ok: false, code: 'TIMEOUT' }],
  ])('a check that %s reads %j', async (_what, check, expected) => {
    const { log } = capture();
    const readiness = createReadiness({ checks: { it: check }, log, timeoutMs: 50 });
    expect(await readiness.run()).toEqual({ ready: expected.ok, checks: { it: expected } });
  });

  it('logs the detail when a check starts failing, changes code or recovers, not on every probe', async () => {
    const { log, lines } = capture();
    let failure: Error | undefined = new Error("Can't reach database server at 10.0.0.5:5432");
    const readiness = createReadiness({
      checks: {
        database: async () => {
          if (failure) throw failure;
        },
      },
      log,
    });
    for (let i = 0; i < 5; i++) await readiness.run();
    failure = new ReadinessError('MIGRATIONS_PENDING', 'not applied: 2026_x');
    await readiness.run();
    await readiness.run();
    failure = undefined;
    await readiness.run();
    await readiness.run();
    expect(lines().map((l) => [l.msg, l.code])).toEqual([
      ['readiness check failing', 'UNAVAILABLE'],
      ['readiness check failing', 'MIGRATIONS_PENDING'],
      ['readiness check passes again', undefined],
    ]);
    expect(JSON.stringify(lines()[0])).toContain('10.0.0.5:5432');
  });
});
