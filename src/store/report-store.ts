import type { Db } from './db.ts';
import { sqlOn } from './sql-transaction.ts';

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
  type Row = { id: number; createdAt: Date; format: string; params: unknown; content: string };
  const raw = sqlOn(db);
  return {
    async save(report) {
      const [row] = await raw.$queryRaw<Row[]>`
        INSERT INTO "Report" ("format", "params", "content") VALUES (${report.format}, ${JSON.stringify(report.params)}::jsonb, ${report.content})
        RETURNING "id", "createdAt", "format", "params", "content"`;
      if (row === undefined) throw new Error('INSERT INTO "Report" returned no row');
      return shape(row) as StoredReport;
    },
    async list(limit) {
      const rows = await raw.$queryRaw<
        Omit<Row, 'content'>[]
      >`SELECT "id", "createdAt", "format", "params" FROM "Report" ORDER BY "id" DESC LIMIT ${limit}::int`;
      return rows.map(shape);
    },
    async get(id) {
      const [row] = await raw.$queryRaw<
        Row[]
      >`SELECT "id", "createdAt", "format", "params", "content" FROM "Report" WHERE "id" = ${id}::int`;
      return row ? (shape(row) as StoredReport) : null;
    },
  };
}
