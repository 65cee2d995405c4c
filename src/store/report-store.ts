import type { Db } from './prisma.ts';

/** A stored audit report. */
export interface StoredReport {
  id: number;
  createdAt: Date;
  format: string;
  params: Record<string, unknown>;
  content: string;
}

export interface ReportStore {
  save(report: { format: string; params: Record<string, unknown>; content: string }): Promise<StoredReport>;
  /** Newest first, without content. */
  list(limit: number): Promise<Omit<StoredReport, 'content'>[]>;
  get(id: number): Promise<StoredReport | null>;
}

export function createReportStore(db: Db): ReportStore {
  const shape = (row: { id: number; createdAt: Date; format: string; params: unknown; content?: string }) => ({
    id: row.id,
    createdAt: row.createdAt,
    format: row.format,
    params: (row.params ?? {}) as Record<string, unknown>,
    ...(row.content !== undefined ? { content: row.content } : {}),
  });
  return {
    async save(report) {
      return shape(await db.report.create({ data: { format: report.format, params: report.params as object, content: report.content } })) as StoredReport;
    },
    async list(limit) {
      const rows = await db.report.findMany({ orderBy: { id: 'desc' }, take: limit, select: { id: true, createdAt: true, format: true, params: true } });
      return rows.map(shape);
    },
    async get(id) {
      const row = await db.report.findUnique({ where: { id } });
      return row ? (shape(row) as StoredReport) : null;
    },
  };
}
