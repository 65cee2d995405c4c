/**
 * The access rule has one definition (src/store/access-rule.ts) and several forms: SQL in the
 * phase and change-log readers, a Prisma where in the audit read, and the JS predicates of live
 * subscriptions and cluster-level checks. For many scopes over a store of several clusters and
 * namespaces, what each SQL read returns is exactly what the JS form keeps of everything.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeMatches } from '../../../src/services/read-change-feed.ts';
import { mayAccess } from '../../../src/store/access-rule.ts';
import type { Db } from '../../../src/store/prisma.ts';
import { createDb } from '../../../src/store/prisma.ts';
import { readAuditInput } from '../../../src/store/read-audit.ts';
import { createHistoryReader, type HistoryReader, type StatusChangeFilter } from '../../../src/store/read-history.ts';
import { createPhaseReader, type PhaseReader } from '../../../src/store/read-phases.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import { FULL_ACCESS, type AccessScope, type PhaseRecord } from '../../../src/store/read-types.ts';
import { insertPhaseInterval, insertStatusChange } from '../../helpers/history-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';

const CLUSTERS = ['alpha', 'beta', 'gamma'];
const NAMESPACES = ['shop', 'pay', 'ops'];
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (m: number) => new Date(T0 + m * 60_000);
const RANGE = { from: at(0), to: at(60) };

let database: TestDatabase;
let db: Db;
let phases: PhaseReader;
let history: HistoryReader;
let allPhases: PhaseRecord[];
let allChanges: StatusChange[];

beforeAll(async () => {
  database = await createTestDatabase('access_rule');
  db = createDb(database.url, { poolSize: 2 });
  let minute = 1;
  for (const name of CLUSTERS) {
    const cluster = await db.cluster.create({ data: { name, reachable: true, lastGoodReadAt: at(0) } });
    // A cluster-level fact: a reachability change, with no phase.
    await insertStatusChange(db, {
      clusterId: cluster.id,
      phaseId: null,
      scope: 'cluster',
      at: at(minute++),
      fromStatus: 'Reachable',
      toStatus: 'Unreachable',
    });
    // Not every namespace in every cluster, so scopes can select nothing.
    for (const namespace of NAMESPACES.filter((_, i) => name !== 'gamma' || i === 0)) {
      const phase = await db.phase.create({
        data: {
          clusterId: cluster.id,
          sourceKind: 'cli-utils',
          namespace,
          name: 'web',
          firstSeenAt: at(0),
          lastSeenAt: at(0),
        },
      });
      await insertPhaseInterval(db, { phaseId: phase.id, status: 'Current', from: at(0), to: null });
      await insertStatusChange(db, {
        clusterId: cluster.id,
        phaseId: phase.id,
        scope: 'phase',
        at: at(minute++),
        fromStatus: 'InProgress',
        toStatus: 'Current',
      });
      await insertStatusChange(db, {
        clusterId: cluster.id,
        phaseId: phase.id,
        scope: 'resource',
        resourceKey: `apps/Deployment/${namespace}/web`,
        at: at(minute++),
        fromStatus: null,
        toStatus: 'Failed',
      });
    }
    // The change log outlives phases retention deleted: a change whose phase is no longer known.
    const gone = await db.phase.create({
      data: {
        clusterId: cluster.id,
        sourceKind: 'cli-utils',
        namespace: 'shop',
        name: 'gone',
        firstSeenAt: at(0),
        lastSeenAt: at(0),
      },
    });
    await insertStatusChange(db, {
      clusterId: cluster.id,
      phaseId: gone.id,
      scope: 'phase',
      at: at(minute++),
      fromStatus: 'Current',
      toStatus: null,
    });
    await db.phase.delete({ where: { id: gone.id } });
  }
  phases = createPhaseReader(db);
  history = createHistoryReader(db);
  allPhases = (await phases.listPhases(FULL_ACCESS, { filter: {}, order: 'NAME', first: 100 })).items;
  allChanges = (await history.listStatusChanges(FULL_ACCESS, {}, 1000)).items;
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

/** A scope over the store's names and one no row has (empty lists: unrestricted). */
const scopes: fc.Arbitrary<AccessScope> = fc.record({
  clusters: fc.subarray([...CLUSTERS, 'elsewhere']),
  namespaces: fc.subarray([...NAMESPACES, 'nowhere']),
});

const filters: fc.Arbitrary<StatusChangeFilter> = fc.record(
  {
    cluster: fc.constantFrom(...CLUSTERS),
    namespace: fc.constantFrom(...NAMESPACES),
    scopes: fc.subarray(['cluster', 'phase', 'resource'], { minLength: 1 }),
    toStatus: fc.subarray(['Current', 'Failed', 'Unreachable'], { minLength: 1 }),
  },
  { requiredKeys: [] },
);

const seqs = (items: readonly StatusChange[]) => items.map((c) => c.seq);
const ids = (items: readonly { id: number }[]) => items.map((p) => p.id).sort((a, b) => a - b);

describe('the access rule', () => {
  it('seeds what the properties need: cluster-level changes and changes of deleted phases', () => {
    expect(allPhases).toHaveLength(7);
    expect(allChanges.filter((c) => c.phaseId === null)).toHaveLength(3);
    expect(allChanges.filter((c) => c.phaseId !== null && c.phase === null)).toHaveLength(3);
  });

  it('the change log query returns exactly the changes the live feed lets through', async () => {
    await fc.assert(
      fc.asyncProperty(scopes, filters, async (scope, filter) => {
        const page = await history.listStatusChanges(scope, filter, 1000);
        expect(seqs(page.items)).toEqual(seqs(allChanges.filter((change) => changeMatches(change, scope, filter))));
      }),
      { numRuns: 80 },
    );
  });

  it('phase lists and audit reads return exactly the phases the JS rule admits', async () => {
    await fc.assert(
      fc.asyncProperty(scopes, async (scope) => {
        const visible = ids(allPhases.filter((p) => mayAccess(scope, { cluster: p.cluster, namespace: p.namespace })));
        expect(ids((await phases.listPhases(scope, { filter: {}, order: 'NAME', first: 100 })).items)).toEqual(visible);
        const audit = await readAuditInput(db, RANGE, { clusters: [], namespaces: [], phases: [] }, scope);
        expect(audit.phases.map((p) => Number(p.id)).sort((a, b) => a - b)).toEqual(visible);
      }),
      { numRuns: 40 },
    );
  });

  it.each([
    [
      'a namespace-restricted scope sees its cluster-level changes',
      { clusters: ['alpha'], namespaces: ['pay'] },
      ['cluster:alpha', 'phase:alpha/pay', 'resource:alpha/pay'],
    ],
    [
      'a cluster-restricted scope sees changes of deleted phases in its clusters',
      { clusters: ['gamma'], namespaces: [] },
      ['cluster:gamma', 'phase:gamma/shop', 'resource:gamma/shop', 'phase:gamma/?'],
    ],
    [
      'a namespace restriction admits no change of a deleted phase, whose namespace is unknown',
      { clusters: ['gamma'], namespaces: ['shop'] },
      ['cluster:gamma', 'phase:gamma/shop', 'resource:gamma/shop'],
    ],
  ])('%s', async (_name, scope, expected) => {
    const page = await history.listStatusChanges(scope, {}, 1000);
    expect(
      page.items.map((c) =>
        c.scope === 'cluster' ? `cluster:${c.cluster}` : `${c.scope}:${c.cluster}/${c.phase?.namespace ?? '?'}`,
      ),
    ).toEqual(expected);
  });
});
