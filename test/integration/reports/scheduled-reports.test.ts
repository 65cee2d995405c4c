/** Scheduled reports run through BullMQ on real Redis and are stored in Postgres for download. */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReportWorker } from '../../../workers/report-worker.ts';
import type { RunningReportWorker } from '../../../workers/report-worker.ts';
import { createDb } from '../../../src/store/prisma.ts';
import type { Db } from '../../../src/store/prisma.ts';
import { createReportStore } from '../../../src/store/report-store.ts';
import { waitFor } from '../../../src/runtime/wait.ts';
import { reportScheduleSchema } from '../../../src/queue/report-jobs.ts';
import { insertPhaseInterval } from '../../helpers/history-rows.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix } from '../../helpers/services.ts';
import type { TestDatabase } from '../../helpers/services.ts';

let database: TestDatabase;
let db: Db;
let workerDb: Db;
let worker: RunningReportWorker;
const now = new Date('2026-11-17T12:00:00Z');

beforeAll(async () => {
  database = await createTestDatabase('scheduled_reports');
  db = createDb(database.url);
  workerDb = createDb(database.url, { prisma: false });
  // Observed just now on an hourly schedule: its open intervals are vouched for until now.
  const cluster = await db.cluster.create({
    data: { name: 'prod', labels: {}, tickLastSeenAt: new Date(), snapshotIntervalMs: 3_600_000 },
  });
  const phase = await db.phase.create({
    data: {
      clusterId: cluster.id,
      sourceKind: 'argocd',
      namespace: 'argocd',
      name: 'checkout',
      firstSeenAt: new Date('2026-11-17T00:00:00Z'),
      lastSeenAt: now,
    },
  });
  for (const row of [
    {
      phaseId: phase.id,
      status: 'Current',
      summary: {},
      from: new Date('2026-11-17T00:00:00Z'),
      to: new Date('2026-11-17T06:00:00Z'),
    },
    {
      phaseId: phase.id,
      status: 'Failed',
      summary: {},
      from: new Date('2026-11-17T06:00:00Z'),
      to: new Date('2026-11-17T09:00:00Z'),
    },
    { phaseId: phase.id, status: 'Current', summary: {}, from: new Date('2026-11-17T09:00:00Z'), to: null },
  ]) {
    await insertPhaseInterval(db, row);
  }
  worker = await startReportWorker({
    // As in a worker process: the pool only, no Prisma.
    db: workerDb,
    redisUrl: testRedisUrl(),
    log: pino({ level: 'silent' }),
    prefix: uniquePrefix('reports'),
    schedules: [
      reportScheduleSchema.parse({
        name: 'daily-prod',
        every: '24h',
        window: '12h',
        format: 'csv',
        clusters: ['prod'],
      }),
    ],
    now: () => now,
  });
});

afterAll(async () => {
  await worker.close();
  await db.$disconnect();
  await workerDb.$disconnect();
  await database.drop();
});

describe('scheduled audit reports', () => {
  it('registers one job scheduler per configured schedule', async () => {
    const schedulers = await worker.queue.getJobSchedulers();
    expect(schedulers.map((s) => s.key)).toEqual(['report.daily-prod']);
    expect(schedulers[0]?.every).toBe(24 * 3_600_000);
  });

  it('stores the rendered report of the window that just ended', async () => {
    const reports = createReportStore(db);
    await waitFor(async () => (await reports.list(10)).length > 0, {
      timeoutMs: 15_000,
      intervalMs: 100,
      what: 'the first scheduled report',
    });
    const [summary] = await reports.list(10);
    expect(summary).toMatchObject({
      format: 'csv',
      params: {
        schedule: 'daily-prod',
        from: '2026-11-17T00:00:00.000Z',
        to: '2026-11-17T12:00:00.000Z',
        clusters: ['prod'],
      },
    });
    const stored = await reports.get(summary?.id as number);
    const [header, row] = (stored?.content ?? '').trim().split('\n');
    expect(header).toContain('availability');
    expect(row).toContain('checkout');
    // 9 of 12 hours Current: 75% available, one failure.
    expect(row).toMatch(/75(\.0+)?%?/);
  });
});
