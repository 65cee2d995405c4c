/**
 * Live snapshots watch the owner kinds and their owned kinds (`phases.owners`), so a Job an
 * operator creates for its phase queues a snapshot naming that Job, though no phase lists it yet.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lcmPhase, ownedJob, ownerPhaseCrds } from '../../../src/demo/objects.ts';
import type { ChangedObjects } from '../../../src/inventory/affected-phases.ts';
import { startLiveSnapshots } from '../../../src/snapshot/live.ts';
import { startTestCluster, waitFor, type TestCluster } from './helpers.ts';

describe('live snapshots of owner phases', () => {
  let cluster: TestCluster;
  const phase = lcmPhase('lcm', 'install-keystone', 'uid-live-keystone');
  beforeAll(async () => {
    cluster = await startTestCluster('live-owners');
    cluster.emulator.apply(ownerPhaseCrds());
    cluster.emulator.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lcm' } }, phase]);
  });
  afterAll(async () => cluster.close());

  it('a new Job of an owner queues a snapshot naming it', async () => {
    const changes: (ChangedObjects | undefined)[] = [];
    const live = await startLiveSnapshots(
      [cluster.client],
      async (_name, _tickAt, changed) => {
        changes.push(changed);
      },
      pino({ level: 'silent' }),
      {
        debounceMs: 50,
        maxWaitMs: 500,
        owners: [{ kind: { group: 'lcm.example.dev', kind: 'Phase' }, ownedKinds: [{ group: 'batch', kind: 'Job' }] }],
      },
    );
    try {
      // The initial list of the watches is a burst of its own; wait for it to go by.
      await waitFor(() => changes.length > 0, 'the snapshot of the initial list', 5000);
      await new Promise((resolve) => setTimeout(resolve, 150));
      changes.length = 0;
      cluster.emulator.apply(ownedJob(phase, 'keystone-db-sync', 'uid-live-job', 'running'));
      await waitFor(
        () => changes.some((c) => c?.objects.some((o) => o.kind === 'Job')),
        'a snapshot naming the new Job',
        5000,
      );
      expect(changes.flatMap((c) => c?.objects ?? [])).toContainEqual({
        group: 'batch',
        kind: 'Job',
        namespace: 'lcm',
        name: 'keystone-db-sync',
      });
    } finally {
      live.close();
    }
  });
});
