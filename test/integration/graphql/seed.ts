/**
 * Seeded history for the GraphQL tests, written row by row with exact times so every expected
 * value is known. T0 is 2026-01-01T00:00:00Z; `at(m)` is T0 plus m minutes.
 *
 * prod/shop/web (cli-utils, team=shop): InProgress [0,10) Current [10,20) Current [20,30) (message
 *   changed) Failed [30,40) Current [40,-). Deployment shop/web follows (revision 1 until 25, then
 *   2); Service shop/web Current from 0; ConfigMap shop/web-config from 25 (manifest 2 added it).
 * prod/shop/api (flux, team=shop): Current [0,50) Failed [50,-), worst Deployment shop/api.
 * staging/shop/web (cli-utils): Current [0,35), then Current but stale [35,-) (last good read 30).
 * prod/payments/ledger (argocd, team=payments): Current [5,-).
 * prod/shop/fresh (cli-utils): Current [now-25m, now-15m), nothing, Current since `now - 5m` (the gate's
 *   "not long enough"; a gap ends a run), and its Service likewise.
 */
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { insertPhaseInterval, insertResourceInterval, insertStatusChange } from '../../helpers/history-rows.ts';

export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (minutes: number): Date => new Date(T0 + minutes * 60_000);
export const iso = (minutes: number): string => at(minutes).toISOString();

const DEPLOY_WEB = 'apps/Deployment/shop/web';
const SERVICE_WEB = '/Service/shop/web';
const CONFIG_WEB = '/ConfigMap/shop/web-config';
const DEPLOY_API = 'apps/Deployment/shop/api';

export interface Seeded {
  prod: number;
  staging: number;
  web: number;
  api: number;
  stagingWeb: number;
  ledger: number;
  fresh: number;
  freshSince: Date;
  revision1: number;
  revision2: number;
}

type Counts = Partial<Record<'Current' | 'InProgress' | 'Failed', number>>;

async function phaseInterval(
  db: Db,
  phaseId: number,
  status: string,
  from: Date,
  to: Date | null,
  summary: Counts,
  extra: { message?: string; worst?: string; stale?: boolean; staleSince?: Date } = {},
) {
  await insertPhaseInterval(db, {
    phaseId,
    status,
    message: extra.message ?? `${status}`,
    summary,
    worstResource: extra.worst ?? null,
    stale: extra.stale ?? false,
    staleSince: extra.staleSince ?? null,
    from,
    to,
  });
}

async function resourceInterval(
  db: Db,
  phaseId: number,
  key: string,
  status: string,
  from: Date,
  to: Date | null,
  extra: { message?: string; revisionId?: number } = {},
) {
  await insertResourceInterval(db, {
    phaseId,
    key,
    status,
    message: extra.message ?? `${status}`,
    presence: 'Present',
    revisionId: extra.revisionId ?? null,
    from,
    to,
  });
}

/** Writes the seeded history into the database at `url`. */
export async function seedHistory(url: string): Promise<Seeded> {
  const db = createDb(url, { poolSize: 2 });
  try {
    // Both observed by a tick just now, on an hourly schedule: observed for the whole test run.
    const observed = { tickLastSeenAt: new Date(), snapshotIntervalMs: 3_600_000 };
    const prod = await db.cluster.create({
      data: { name: 'prod', reachable: true, lastGoodReadAt: at(60), ...observed },
    });
    const staging = await db.cluster.create({
      data: { name: 'staging', reachable: false, lastGoodReadAt: at(30), ...observed },
    });
    const phase = (
      clusterId: number,
      sourceKind: string,
      namespace: string,
      name: string,
      labels: Record<string, string>,
      firstSeenAt: Date,
    ) =>
      db.phase.create({
        data: {
          clusterId,
          sourceKind,
          namespace,
          name,
          inventoryId: `${name}-inv`,
          labels,
          firstSeenAt,
          lastSeenAt: firstSeenAt,
        },
      });
    const web = await phase(prod.id, 'cli-utils', 'shop', 'web', { team: 'shop' }, at(0));
    const api = await phase(prod.id, 'flux', 'shop', 'api', { team: 'shop' }, at(0));
    const stagingWeb = await phase(staging.id, 'cli-utils', 'shop', 'web', { team: 'shop' }, at(0));
    const ledger = await phase(prod.id, 'argocd', 'payments', 'ledger', { team: 'payments' }, at(5));
    const freshSince = new Date(Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000);
    const fresh = await phase(prod.id, 'cli-utils', 'shop', 'fresh', {}, freshSince);

    await phaseInterval(db, web.id, 'InProgress', at(0), at(10), { InProgress: 1, Current: 1 }, { worst: DEPLOY_WEB });
    await phaseInterval(db, web.id, 'Current', at(10), at(20), { Current: 2 }, { message: 'all 2 resources Current' });
    await phaseInterval(db, web.id, 'Current', at(20), at(30), { Current: 3 }, { message: 'all 3 resources Current' });
    await phaseInterval(
      db,
      web.id,
      'Failed',
      at(30),
      at(40),
      { Failed: 1, Current: 2 },
      { message: '1 of 3 resources not Current', worst: DEPLOY_WEB },
    );
    await phaseInterval(db, web.id, 'Current', at(40), null, { Current: 3 }, { message: 'all 3 resources Current' });

    const revision1 = (await db.objectRevision.create({ data: { hash: 'rev-1', object: { spec: { replicas: 1 } } } }))
      .id;
    const revision2 = (await db.objectRevision.create({ data: { hash: 'rev-2', object: { spec: { replicas: 2 } } } }))
      .id;
    await resourceInterval(db, web.id, DEPLOY_WEB, 'InProgress', at(0), at(10), { revisionId: revision1 });
    await resourceInterval(db, web.id, DEPLOY_WEB, 'Current', at(10), at(25), { revisionId: revision1 });
    await resourceInterval(db, web.id, DEPLOY_WEB, 'Current', at(25), at(30), { revisionId: revision2 });
    await resourceInterval(db, web.id, DEPLOY_WEB, 'Failed', at(30), at(40), {
      revisionId: revision2,
      message: 'ProgressDeadlineExceeded',
    });
    await resourceInterval(db, web.id, DEPLOY_WEB, 'Current', at(40), null, { revisionId: revision2 });
    await resourceInterval(db, web.id, SERVICE_WEB, 'Current', at(0), null);
    await resourceInterval(db, web.id, CONFIG_WEB, 'Current', at(25), null);

    const m1 = await db.manifest.create({
      data: {
        hash: 'manifest-1',
        source: { kind: 'ConfigMap' },
        entryCount: 2,
        entries: [
          { group: '', kind: 'Service', namespace: 'shop', name: 'web' },
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
        ],
      },
    });
    const m2 = await db.manifest.create({
      data: {
        hash: 'manifest-2',
        source: { kind: 'ConfigMap' },
        entryCount: 3,
        entries: [
          { group: '', kind: 'ConfigMap', namespace: 'shop', name: 'web-config' },
          { group: '', kind: 'Service', namespace: 'shop', name: 'web' },
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
        ],
      },
    });
    await db.phaseManifest.create({ data: { phaseId: web.id, manifestId: m1.id, from: at(0), to: at(25) } });
    await db.phaseManifest.create({ data: { phaseId: web.id, manifestId: m2.id, from: at(25), to: null } });

    await phaseInterval(db, api.id, 'Current', at(0), at(50), { Current: 1 });
    await phaseInterval(
      db,
      api.id,
      'Failed',
      at(50),
      null,
      { Failed: 1 },
      { message: 'Deployment shop/api is Failed: crash loop', worst: DEPLOY_API },
    );
    await resourceInterval(db, api.id, DEPLOY_API, 'Current', at(0), at(50));
    await resourceInterval(db, api.id, DEPLOY_API, 'Failed', at(50), null, { message: 'crash loop' });

    await phaseInterval(db, stagingWeb.id, 'Current', at(0), at(35), { Current: 1 });
    await phaseInterval(
      db,
      stagingWeb.id,
      'Current',
      at(35),
      null,
      { Current: 1 },
      { stale: true, staleSince: at(30) },
    );
    await phaseInterval(db, ledger.id, 'Current', at(5), null, { Current: 1 });
    // An earlier Current stretch, then a gap (no record): the current run starts after the gap.
    const minutesBefore = (m: number) => new Date(freshSince.getTime() - m * 60_000);
    await phaseInterval(db, fresh.id, 'Current', minutesBefore(20), minutesBefore(10), { Current: 1 });
    await phaseInterval(db, fresh.id, 'Current', freshSince, null, { Current: 1 });
    await resourceInterval(db, fresh.id, '/Service/shop/fresh', 'Current', minutesBefore(20), minutesBefore(10));
    await resourceInterval(db, fresh.id, '/Service/shop/fresh', 'Current', freshSince, null);

    const change = (
      clusterId: number,
      phaseId: number | null,
      scope: string,
      minutes: number,
      fromStatus: string | null,
      toStatus: string | null,
      resourceKey: string | null = null,
    ) =>
      insertStatusChange(db, {
        clusterId,
        phaseId,
        scope,
        at: at(minutes),
        fromStatus,
        toStatus,
        resourceKey,
        message: `${fromStatus ?? '-'} -> ${toStatus ?? '-'}`,
      });
    // In seq order (ids are assigned in insertion order).
    await change(prod.id, web.id, 'phase', 10, 'InProgress', 'Current');
    await change(prod.id, web.id, 'resource', 30, 'Current', 'Failed', DEPLOY_WEB);
    await change(prod.id, web.id, 'phase', 30, 'Current', 'Failed');
    await change(staging.id, null, 'cluster', 35, 'Reachable', 'Unreachable');
    await change(prod.id, web.id, 'phase', 40, 'Failed', 'Current');
    await change(prod.id, ledger.id, 'phase', 45, null, 'Current');
    await change(prod.id, api.id, 'phase', 50, 'Current', 'Failed');
    return {
      prod: prod.id,
      staging: staging.id,
      web: web.id,
      api: api.id,
      stagingWeb: stagingWeb.id,
      ledger: ledger.id,
      fresh: fresh.id,
      freshSince,
      revision1,
      revision2,
    };
  } finally {
    await db.$disconnect();
  }
}
