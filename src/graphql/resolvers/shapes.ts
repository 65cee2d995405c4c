/** Shaping domain records into the SDL's shapes (no I/O). */
import type { GateOutcome } from '../../services/read-gate.ts';
import type { ManifestVersionRecord, StatusChangeItem } from '../../store/read-types.ts';

/** StatusCounts from a stored summary (counts keyed by status). */
export function toCounts(summary: Record<string, number>) {
  const get = (status: string) => summary[status] ?? 0;
  const counts = { current: get('Current'), inProgress: get('InProgress'), failed: get('Failed'), terminating: get('Terminating'), notFound: get('NotFound'), unknown: get('Unknown') };
  return { ...counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** A StatusChange as the SDL shows it. */
export function toStatusChange(change: StatusChangeItem) {
  return { ...change, seq: change.seq.toString(), phaseId: change.phaseId === null ? null : String(change.phaseId) };
}

export function toManifest(record: ManifestVersionRecord) {
  return { hash: record.hash, entries: record.entries, entryCount: record.entries.length, source: record.source, from: record.from, to: record.to };
}

export function toGateResult(outcome: GateOutcome) {
  return {
    ...outcome,
    remaining: outcome.remainingMs === null ? null : outcome.remainingMs,
  };
}
