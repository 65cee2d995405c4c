/**
 * A worker keeps each resource's stored revision as its 32-character latin1 digest. Revisions come
 * with that digest from a watch cache and as a hex hash only from a list: whichever form a
 * snapshot sees, and whether its state was kept or read from the store, an object whose spec did
 * not change keeps its stored revision, and one whose spec changed gets a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOfHex } from '../../../src/history/fingerprints.ts';
import { planSnapshot } from '../../../src/history/plan-snapshot.ts';
import type { ClusterObservation, HashedDocument, ObservedResource } from '../../../src/history/types.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { loadClusterState, lockCluster } from '../../../src/store/history-state.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { withSqlTransaction } from '../../../src/store/sql-transaction.ts';
import type { Db } from '../../../src/store/prisma.ts';
import {
  applyFleet,
  deploymentRef,
  namespaceOf,
  readyDeployment,
  readyStatus,
  rollingStatus,
  type FleetShape,
} from './fleet.ts';
import {
  countRows,
  createTestDatabase,
  startEmulatedCluster,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const SHAPE: FleetShape = { phases: 1, resourcesPerPhase: 3, phasesPerNamespace: 1 };
const KEYS = [0, 1, 2].map((r) => `apps/Deployment/${namespaceOf(0, SHAPE)}/app-0-${r}`);

type Form = 'watched' | 'listed';

/**
 * `observation` with its revisions in `form`: with their digest as a watch cache gives them, or
 * with the hex hash only. Each notes in `hashRead` the resources whose hex hash was read: a
 * revision given with its digest has it read only when it is handed to the store.
 */
function inForm(observation: ClusterObservation, form: Form, hashRead: Set<string>): ClusterObservation {
  if (observation.outcome !== 'ok') throw new Error('emulated cluster unreachable');
  const revision = (key: string, document: HashedDocument): HashedDocument => {
    const { hash } = document;
    return {
      get hash() {
        hashRead.add(key);
        return hash;
      },
      get body() {
        return document.body;
      },
      ...(form === 'watched' ? { digest: digestOfHex(hash) } : {}),
    };
  };
  const resource = (r: ObservedResource): ObservedResource =>
    r.revision === undefined ? r : { ...r, revision: revision(r.key, r.revision) };
  return { ...observation, phases: observation.phases.map((p) => ({ ...p, resources: p.resources.map(resource) })) };
}

/** Each resource's current revision id, by key. */
async function currentRevisions(db: Db): Promise<Map<string, number | null>> {
  const rows = await db.resourceCurrentStatus.findMany({
    select: { revisionId: true, resource: { select: { key: true } } },
  });
  return new Map(rows.map((r) => [r.resource.key, r.revisionId]));
}

describe('revisions of a kept cluster state', () => {
  let kept: TestDatabase;
  let read: TestDatabase;
  let cluster: EmulatedCluster;
  let tick = Date.UTC(2026, 1, 1);

  beforeAll(async () => {
    [kept, read] = await Promise.all([createTestDatabase('revisions_kept'), createTestDatabase('revisions_read')]);
    cluster = await startEmulatedCluster('revisions');
    applyFleet(cluster.emulator, SHAPE);
  });
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([kept?.drop(), read?.drop()]);
  });

  it('keep an unchanged spec on its stored revision and give a changed one a new revision, whatever form they come in', async () => {
    const keeping = createRecorder(createSnapshotStore(kept.db));
    const reading = createRecorder(createSnapshotStore(read.db), { keepState: false });
    const newImage = (r: number, image: string) => {
      const object = readyDeployment(namespaceOf(0, SHAPE), `app-0-${r}`);
      const spec = object['spec'] as { template: { spec: { containers: { image: string }[] } } };
      spec.template.spec.containers = [{ ...spec.template.spec.containers[0], image } as { image: string }];
      cluster.emulator.apply([object]);
    };
    // [step, form, change, resources whose spec changed]
    const steps: [string, Form, () => void, number[]][] = [
      ['first snapshot', 'listed', () => undefined, [0, 1, 2]],
      // Read from the store (the first snapshot created the phase): digests made from the hex column.
      [
        'app-0 rolls, app-1 gets a new image',
        'watched',
        () => {
          cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), rollingStatus());
          newImage(1, 'nginx:1.28');
        },
        [1],
      ],
      // Kept: app-0's and app-1's digests came with the watched revisions, app-2's from the store.
      [
        'app-0 is ready again, app-1 rolls, app-2 gets a new image',
        'listed',
        () => {
          cluster.emulator.patchStatus(deploymentRef(0, 0, SHAPE), readyStatus());
          cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), rollingStatus());
          newImage(2, 'nginx:1.28');
        },
        [2],
      ],
      [
        'everything rolls',
        'watched',
        () => [0, 1, 2].forEach((r) => cluster.emulator.patchStatus(deploymentRef(0, r, SHAPE), rollingStatus())),
        [],
      ],
      ['app-0 goes back to its first image', 'watched', () => newImage(0, 'nginx:1.27-alpine'), [0]],
    ];
    let before = { kept: new Map<string, number | null>(), read: new Map<string, number | null>() };
    for (const [step, form, change, respecified] of steps) {
      change();
      tick += 30_000;
      const observation = await observeCluster(cluster.client, { now: () => new Date(tick) });
      const hashRead = { kept: new Set<string>(), read: new Set<string>() };
      const [a, b] = [
        await keeping.record(inForm(observation, form, hashRead.kept), { tickAt: new Date(tick) }),
        await reading.record(inForm(observation, form, hashRead.read), { tickAt: new Date(tick) }),
      ];
      if (!a.written || !b.written) throw new Error(`${step}: snapshot not written`);
      expect(
        a.changes.map((c) => `${c.resourceKey ?? '-'} ${c.toStatus ?? 'null'}`),
        step,
      ).toEqual(b.changes.map((c) => `${c.resourceKey ?? '-'} ${c.toStatus ?? 'null'}`));
      const after = { kept: await currentRevisions(kept.db), read: await currentRevisions(read.db) };
      for (const [name, revisions] of Object.entries(after) as ['kept' | 'read', Map<string, number | null>][]) {
        const previous = before[name];
        expect(
          [...revisions.values()].every((id) => id !== null),
          `${step} (${name})`,
        ).toBe(true);
        const renewed = KEYS.filter((key) => previous.get(key) !== revisions.get(key));
        expect(renewed, `${step} (${name}): resources on a new revision`).toEqual(respecified.map((r) => KEYS[r]));
        // Only a revision the store does not have is handed to it (a watch cache's is never made hex otherwise).
        if (form === 'watched')
          expect([...hashRead[name]].sort(), `${step} (${name}): revisions handed to the store`).toEqual(
            respecified.map((r) => KEYS[r]),
          );
      }
      expect(await countRows(kept.db), step).toEqual(await countRows(read.db));
      before = after;
    }
    // Three first revisions and three new images.
    expect((await countRows(kept.db)).ObjectRevision).toBe(6);
  });

  it.each(['watched', 'listed'] as const)(
    'are read from the store the same with the %s observation to share strings with as without one',
    async (form) => {
      // A status change, and a spec the store has no revision of yet (its stored digest is not the observed one).
      cluster.emulator.patchStatus(deploymentRef(0, 1, SHAPE), readyStatus());
      const respecified = readyDeployment(namespaceOf(0, SHAPE), 'app-0-2');
      (respecified['spec'] as { replicas: number }).replicas = 3;
      cluster.emulator.apply([respecified]);
      const observation = inForm(
        await observeCluster(cluster.client, { now: () => new Date(tick + 30_000) }),
        form,
        new Set(),
      );
      const [plain, sharing] = await withSqlTransaction(
        kept.db,
        async (tx) => {
          const row = await lockCluster(tx, 'revisions');
          return [await loadClusterState(tx, row), await loadClusterState(tx, row, undefined, observation)];
        },
        { timeoutMs: 30_000, maxWaitMs: 5_000 },
      );
      expect(sharing.phases.flatMap((p) => p.resources).map((r) => r.revisionDigest)).not.toContain(null);
      expect(sharing).toEqual(plain);
      expect(planSnapshot(sharing, observation)).toEqual(planSnapshot(plain, observation));
    },
  );
});
