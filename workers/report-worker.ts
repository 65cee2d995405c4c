/**
 * Runs scheduled audit reports: renders the window that just ended and stores it in the Report
 * table, where `phaselog` and the API can fetch it later.
 */
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { logRedisErrors } from '../src/runtime/redis-errors.ts';
import { parseDuration } from '../src/duration.ts';
import { REPORT_QUEUE, reportJobSchema, scheduleReports } from '../src/queue/report-jobs.ts';
import type { ReportSchedule } from '../src/queue/report-jobs.ts';
import { createAuditReport } from '../src/services/audit-report.ts';
import type { Db } from '../src/store/db.ts';
import { FULL_ACCESS } from '../src/store/read-types.ts';
import { createReportStore } from '../src/store/report-store.ts';

export interface ReportWorkerOptions {
  db: Db;
  redisUrl: string;
  log: Logger;
  schedules: readonly ReportSchedule[];
  queueName?: string;
  prefix?: string;
  now?: () => Date;
}

export interface RunningReportWorker {
  queue: Queue;
  close(): Promise<void>;
}

export async function startReportWorker(options: ReportWorkerOptions): Promise<RunningReportWorker> {
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const queueName = options.queueName ?? REPORT_QUEUE;
  const prefix = options.prefix ?? 'bull';
  logRedisErrors(connection, options.log, 'report-queue');
  const queue = new Queue(queueName, { connection, prefix });
  // The queue re-emits its connection's errors, logged above; BullMQ writes unheard ones to stderr.
  queue.on('error', () => {});
  const reports = createReportStore(options.db);
  const bySchedule = new Map(options.schedules.map((s) => [s.name, s]));
  await scheduleReports(queue, options.schedules);
  const worker = new Worker(
    queueName,
    async (job) => {
      const parsed = reportJobSchema.safeParse(job.data);
      if (!parsed.success) throw new UnrecoverableError(`invalid report job payload: ${parsed.error.message}`);
      const schedule = bySchedule.get(parsed.data.schedule);
      if (!schedule) throw new UnrecoverableError(`report schedule "${parsed.data.schedule}" is not configured`);
      const to = options.now?.() ?? new Date();
      const from = new Date(to.getTime() - (parseDuration(schedule.window ?? schedule.every) as number));
      const rendered = await createAuditReport(options.db, {
        from,
        to,
        now: to,
        format: schedule.format,
        selection: { clusters: schedule.clusters, namespaces: schedule.namespaces, phases: schedule.phases },
        // A schedule is the operator's own configuration: it may cover every cluster.
        access: FULL_ACCESS,
      });
      const stored = await reports.save({
        format: schedule.format,
        content: rendered.content,
        params: {
          schedule: schedule.name,
          from: from.toISOString(),
          to: to.toISOString(),
          clusters: schedule.clusters,
          namespaces: schedule.namespaces,
          phases: schedule.phases,
        },
      });
      options.log.info(
        { schedule: schedule.name, reportId: stored.id, phases: rendered.report.phases.length },
        'scheduled report stored',
      );
      return { reportId: stored.id };
    },
    { connection, prefix, concurrency: 1 },
  );
  logRedisErrors(worker, options.log, 'report-worker');
  worker.on('failed', (job, error) =>
    options.log.error({ schedule: job?.data?.schedule, err: error }, 'scheduled report failed'),
  );
  return {
    queue,
    async close() {
      await worker.close();
      await queue.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
