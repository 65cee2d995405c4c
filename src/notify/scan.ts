/**
 * The scan use case: reads the change log after a route's cursor, judges each change, records the
 * route's deliveries and moves the cursor, in one transaction (src/store/notification-store.ts).
 * Nothing here waits on a receiver or on Redis: the caller queues the sending after the commit.
 */
import type { HistoryReader } from '../store/read-history.ts';
import type { NotificationStore } from '../store/notification-store.ts';
import { FULL_ACCESS } from '../store/read-types.ts';
import type { RouteConfig } from './config.ts';
import { holdFor, judgeChange, matchesRoute, releaseHeld, subjectOf, type NotifiableChange } from './judge.ts';

/** Changes read per page, and most pages per scan (the next scan goes on from the cursor). */
const PAGE = 500;
const MAX_PAGES = 4;

/** What one scan of a route did. */
export interface ScanResult {
  /** Deliveries now pending, to queue. */
  due: bigint[];
  recorded: number;
  suppressed: number;
  /** False when another scanner held the route. */
  scanned: boolean;
}

/** Scans one route. */
export async function scanRoute(
  deps: { store: NotificationStore; history: HistoryReader },
  route: RouteConfig,
  now: () => Date,
): Promise<ScanResult> {
  const result: ScanResult = { due: [], recorded: 0, suppressed: 0, scanned: true };
  const done = await deps.store.withRouteScan(route.name, async (tx) => {
    const heldBySubject = new Map<string, { seq: bigint; at: Date; reason: string | null }[]>();
    for (const h of await tx.held()) heldBySubject.set(h.subject, [...(heldBySubject.get(h.subject) ?? []), h]);
    const settle = async (subject: string, next: { at: Date } | undefined): Promise<void> => {
      const waiting = heldBySubject.get(subject) ?? [];
      const still: { seq: bigint; at: Date; reason: string | null }[] = [];
      for (const h of waiting) {
        const verdict = releaseHeld(h.at, holdFor(route, h.reason), next, now());
        if (verdict === 'superseded') {
          await tx.setStatus(h.seq, 'suppressed', h.reason === 'flapping' ? 'flapping' : 'superseded');
          result.suppressed += 1;
        } else if (verdict === 'due') {
          await tx.setStatus(h.seq, 'pending');
          result.due.push(h.seq);
        } else still.push(h);
      }
      if (still.length > 0) heldBySubject.set(subject, still);
      else heldBySubject.delete(subject);
    };

    let cursor = tx.cursor;
    let reachedEnd = false;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const read = await deps.history.listStatusChanges(FULL_ACCESS, {}, PAGE, cursor);
      const needLabels = Object.keys(route.match.labels).length > 0;
      const labels = needLabels
        ? await deps.store.phaseLabels([...new Set(read.items.flatMap((c) => (c.phaseId === null ? [] : [c.phaseId])))])
        : new Map<number, Record<string, string>>();
      for (const item of read.items) {
        const change: NotifiableChange = {
          ...item,
          ...(item.phaseId !== null && labels.has(item.phaseId) ? { phaseLabels: labels.get(item.phaseId) } : {}),
        };
        const subject = subjectOf(change);
        // Any later change of a subject, matching or not, ends what its held deliveries wait for.
        if (heldBySubject.has(subject)) await settle(subject, change);
        cursor = change.seq;
        if (!matchesRoute(route.match, change)) continue;
        const past =
          route.flapping !== undefined
            ? await tx.subjectPast(subject, new Date(change.at.getTime() - route.flapping.window))
            : { count: 0, previousFlapping: false };
        const verdict = judgeChange(route, { recentChanges: past.count, previousFlapping: past.previousFlapping });
        await tx.record({
          seq: change.seq,
          kind: verdict.kind,
          status: verdict.status,
          subject,
          clusterId: change.clusterId,
          phaseId: change.phaseId,
          at: change.at,
          ...('reason' in verdict ? { reason: verdict.reason } : {}),
          ...(verdict.kind === 'flapping' ? { flapCount: verdict.flapCount } : {}),
        });
        result.recorded += 1;
        if (verdict.status === 'pending') result.due.push(change.seq);
        else
          heldBySubject.set(subject, [
            ...(heldBySubject.get(subject) ?? []),
            { seq: change.seq, at: change.at, reason: 'reason' in verdict ? verdict.reason : null },
          ]);
      }
      if (!read.hasMore) {
        reachedEnd = true;
        break;
      }
    }
    // Held deliveries whose subject did not change again (in the whole log read so far): due once
    // they have lasted minDuration. With changes left unread, the next scan decides.
    if (reachedEnd) for (const subject of [...heldBySubject.keys()]) await settle(subject, undefined);
    if (cursor !== tx.cursor) await tx.advance(cursor);
    return true;
  });
  if (done === undefined) result.scanned = false;
  return result;
}
