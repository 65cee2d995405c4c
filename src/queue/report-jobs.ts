/**
 * Scheduled audit reports: each configured schedule is a BullMQ job scheduler; each run renders the
 * report for the window that just ended and stores it (Report table) for later download.
 */
import { z } from 'zod';
import type { Queue } from 'bullmq';
import { parseDuration } from '../duration.ts';

export const REPORT_QUEUE = 'phaselog-reports';
export const REPORT_JOB = 'audit-report';

const duration = z
  .string()
  .refine((v) => parseDuration(v) !== undefined, { message: 'must be a duration such as 1h, 24h or 7d' });

/** One entry of `reports.schedules` in phaselog.yaml. */
export const reportScheduleSchema = z.strictObject({
  /** Unique name; stored reports carry it. */
  name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" or "-"'),
  /** How often to produce the report. */
  every: duration,
  /** The window each report covers, ending when it runs. @default the same as `every` */
  window: duration.optional(),
  format: z.enum(['json', 'csv', 'markdown', 'html']).default('html'),
  clusters: z.array(z.string()).default([]),
  namespaces: z.array(z.string()).default([]),
  phases: z.array(z.string()).default([]),
});

export const reportsConfigSchema = z.strictObject({ schedules: z.array(reportScheduleSchema).default([]) });

export type ReportSchedule = z.infer<typeof reportScheduleSchema>;

/** The job payload: the schedule's name only; the schedule itself is read from config. */
export const reportJobSchema = z.strictObject({ schedule: z.string().min(1) });

/** Create or update one scheduler per schedule and remove those no longer configured. */
export async function scheduleReports(queue: Queue, schedules: readonly ReportSchedule[]): Promise<void> {
  const wanted = new Set(schedules.map((s) => `report.${s.name}`));
  for (const schedule of schedules) {
    await queue.upsertJobScheduler(
      `report.${schedule.name}`,
      { every: parseDuration(schedule.every) as number },
      {
        name: REPORT_JOB,
        data: { schedule: schedule.name },
        opts: {
          attempts: 3,
          backoff: { type: 'exponential', delay: 5000 },
          removeOnComplete: { count: 100 },
          removeOnFail: { count: 100 },
        },
      },
    );
  }
  for (const scheduler of await queue.getJobSchedulers()) {
    if (scheduler.key.startsWith('report.') && !wanted.has(scheduler.key))
      await queue.removeJobScheduler(scheduler.key);
  }
}
