/**
 * The live half of the ui-board benchmark: phase status changes committed to the seeded database
 * and published on Redis as a worker does (one transaction per batch, published after its commit),
 * and, in the page, when each change reached the board's DOM and which long tasks ran meanwhile.
 * Times are epoch milliseconds from `performance.timeOrigin + performance.now()` on both sides:
 * the same machine's clock, so the page's and Node's moments compare.
 */
import type pg from 'pg';
import type { Page } from 'playwright-core';
import type { ChangePublisher } from '../src/pubsub/change-publisher.ts';

/** A seeded phase as the writer changes it and the board shows it. */
export interface LivePhase {
  phaseId: number;
  clusterId: number;
  cluster: string;
  namespace: string;
  name: string;
  status: string;
}

export async function loadLivePhases(sql: pg.Client): Promise<LivePhase[]> {
  const rows = await sql.query<LivePhase>(
    `SELECT p."id" AS "phaseId", p."clusterId", c."name" AS "cluster", p."namespace", p."name", s."status"
     FROM "Phase" p JOIN "Cluster" c ON c."id" = p."clusterId" JOIN "PhaseCurrentStatus" s ON s."phaseId" = p."id" ORDER BY p."id"`,
  );
  return rows.rows;
}

/** Epoch ms with sub-millisecond resolution, comparable with the page's. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/**
 * Commits a batch of phase status changes (the current status and the change log, one transaction)
 * and publishes them; resolves with the moment the commit returned.
 */
export async function commitChanges(
  sql: pg.Client,
  publisher: ChangePublisher,
  changes: { phase: LivePhase; toStatus: string }[],
): Promise<number> {
  const rows = await sql.query<{ seq: string; phaseId: number; at: Date }>(
    `WITH d AS (
       INSERT INTO "StatusDetail" ("hash", "body") VALUES ('bench:live', '{"message":"bench live change"}') ON CONFLICT ("hash") DO UPDATE SET "body" = excluded."body" RETURNING "id"
     ), input AS (
       SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[]) AS i("phaseId", "clusterId", "fromStatus", "toStatus")
     ), current AS (
       UPDATE "PhaseCurrentStatus" s SET "status" = i."toStatus", "from" = now(), "since" = now(), "detailId" = d."id"
       FROM input i, d WHERE s."phaseId" = i."phaseId" RETURNING s."phaseId"
     )
     INSERT INTO "StatusChange" ("at", "clusterId", "phaseId", "scope", "fromStatus", "toStatus", "detailId")
     SELECT now(), i."clusterId", i."phaseId", 'phase', i."fromStatus", i."toStatus", d."id" FROM input i, d
     RETURNING "seq"::text AS "seq", "phaseId", "at"`,
    [
      changes.map((c) => c.phase.phaseId),
      changes.map((c) => c.phase.clusterId),
      changes.map((c) => c.phase.status),
      changes.map((c) => c.toStatus),
    ],
  );
  const committedAt = epochNow();
  const byPhase = new Map(changes.map((c) => [c.phase.phaseId, c]));
  await publisher.publish(
    rows.rows.map((row) => {
      const change = byPhase.get(row.phaseId) as { phase: LivePhase; toStatus: string };
      const { phase } = change;
      return {
        seq: BigInt(row.seq),
        at: row.at,
        cluster: phase.cluster,
        clusterId: phase.clusterId,
        phaseId: phase.phaseId,
        phase: { sourceKind: 'cli-utils', namespace: phase.namespace, name: phase.name },
        scope: 'phase' as const,
        resourceKey: null,
        fromStatus: phase.status,
        toStatus: change.toStatus,
        message: 'bench live change',
      };
    }),
  );
  for (const c of changes) c.phase.status = c.toStatus;
  return committedAt;
}

/** The key under which the page records a cell showing a status. */
export const cellKey = (phase: LivePhase, status: string): string =>
  `${phase.cluster}|${phase.namespace}/${phase.name}|${status}`;

/**
 * Installed before the app loads: records long tasks, and (once `window.__watchBoard()` is called)
 * the first moment each matrix cell showed each status, from a MutationObserver on `data-status`
 * (called after the DOM changed, before the next paint).
 */
export const PAGE_PROBE = `
window.__longTasks = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration }); }).observe({ type: 'longtask', buffered: true });
window.__shown = new Map();
window.__watchBoard = () => {
  const table = document.querySelector('table.matrix');
  new MutationObserver((records) => {
    const at = performance.timeOrigin + performance.now();
    for (const r of records) {
      const cell = r.target;
      const key = cell.getAttribute('data-cluster') + '|' + cell.getAttribute('data-phase') + '|' + cell.getAttribute('data-status');
      if (!window.__shown.has(key)) window.__shown.set(key, at);
    }
  }).observe(table, { subtree: true, attributes: true, attributeFilter: ['data-status'] });
};
`;

/** Waits until the page recorded `key`; its moment (epoch ms). */
export async function shownAt(page: Page, key: string, timeoutMs: number): Promise<number> {
  const handle = await page.waitForFunction(`window.__shown.get(${JSON.stringify(key)})`, undefined, {
    timeout: timeoutMs,
    polling: 'raf',
  });
  return (await handle.jsonValue()) as number;
}

/** Long tasks the page recorded since `sincePageMs` (page clock, performance.now()). */
export async function longTasksSince(page: Page, sincePageMs: number): Promise<{ start: number; duration: number }[]> {
  const all = (await page.evaluate('window.__longTasks')) as { start: number; duration: number }[];
  return all.filter((t) => t.start >= sincePageMs);
}
