/**
 * A bounded log of requests for tests and benchmarks to count.
 */
import type { RequestRecord } from './types.ts';

/** Bounded log: trims back to `limit` once it is a quarter over, so appends stay O(1) amortised. */
export class RequestLog {
  private records: RequestRecord[] = [];

  constructor(private readonly limit: number) {}

  /** Appends a record; the caller may still set `status` on it later. */
  add(record: RequestRecord): RequestRecord {
    this.records.push(record);
    if (this.records.length > this.limit + (this.limit >> 2))
      this.records = this.records.slice(this.records.length - this.limit);
    return record;
  }

  /** Snapshot of the log (copies, so later status updates do not show through). */
  list(): readonly RequestRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** Number of records whose fields equal every field of `filter`. */
  count(filter: Partial<RequestRecord> = {}): number {
    const entries = Object.entries(filter).filter(([, v]) => v !== undefined) as [keyof RequestRecord, unknown][];
    let n = 0;
    for (const r of this.records) if (entries.every(([k, v]) => r[k] === v)) n++;
    return n;
  }

  clear(): void {
    this.records = [];
  }
}
