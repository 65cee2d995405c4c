/**
 * Live snapshots' debounce: a burst of changes becomes one snapshot, and a steady stream of changes
 * still snapshots while it lasts (max-wait), instead of waiting for a pause that never comes.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangedObjects } from '../../../src/inventory/affected-phases.ts';
import { MAX_CHANGED_OBJECTS } from '../../../src/queue/snapshot-jobs.ts';
import { startLiveSnapshots, type LiveSnapshots } from '../../../src/snapshot/live.ts';
import { inventoryConfigMap, readyDeployment, readyStatus, rollingStatus } from '../snapshot/fleet.ts';
import { startTestCluster, waitFor, type TestCluster } from './helpers.ts';

const REF = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'live', name: 'web' };

describe('live snapshot debounce', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster('live-debounce');
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live' } },
      readyDeployment('live', 'web'),
      inventoryConfigMap('live', 'inventory', 'live-phase', [['live', 'apps', 'Deployment', 'web']]),
    ]);
  });
  afterAll(async () => cluster.close());

  async function watch(options: {
    debounceMs: number;
    maxWaitMs: number;
  }): Promise<{ live: LiveSnapshots; queued: number[]; changes: (ChangedObjects | undefined)[] }> {
    const queued: number[] = [];
    const changes: (ChangedObjects | undefined)[] = [];
    const live = await startLiveSnapshots(
      [cluster.client],
      async (_name, tickAt, changed) => {
        queued.push(tickAt);
        changes.push(changed);
      },
      pino({ level: 'silent' }),
      options,
    );
    // The initial list emits ADDED events: let their snapshot go by first.
    await waitFor(() => queued.length > 0, 'the snapshot of the initial list', 5000);
    await new Promise((resolve) => setTimeout(resolve, options.debounceMs * 2));
    queued.length = 0;
    changes.length = 0;
    return { live, queued, changes };
  }

  it('turns a burst of changes into one snapshot, naming each changed object once', async () => {
    const { live, queued, changes } = await watch({ debounceMs: 400, maxWaitMs: 5000 });
    try {
      for (let i = 0; i < 5; i++) cluster.emulator.patchStatus(REF, i % 2 === 0 ? rollingStatus() : readyStatus());
      await waitFor(() => queued.length > 0, 'the burst snapshot', 5000);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(queued).toHaveLength(1);
      expect(changes).toEqual([
        { objects: [{ group: 'apps', kind: 'Deployment', namespace: 'live', name: 'web' }], inventories: [] },
      ]);
    } finally {
      live.close();
    }
  });

  it('names a changed inventory apart from other objects', async () => {
    const { live, queued, changes } = await watch({ debounceMs: 100, maxWaitMs: 1000 });
    try {
      cluster.emulator.apply([
        inventoryConfigMap('live', 'inventory', 'live-phase', [
          ['live', 'apps', 'Deployment', 'web'],
          ['live', 'apps', 'Deployment', 'api'],
        ]),
      ]);
      await waitFor(() => queued.length > 0, 'the inventory snapshot', 5000);
      expect(changes[0]).toEqual({
        objects: [],
        inventories: [{ group: '', kind: 'ConfigMap', namespace: 'live', name: 'inventory' }],
      });
    } finally {
      live.close();
    }
  });

  it('snapshots the whole cluster after a burst too large to name (a relist, a mass rollout)', async () => {
    const { live, queued, changes } = await watch({ debounceMs: 200, maxWaitMs: 5000 });
    try {
      cluster.emulator.apply(
        Array.from({ length: MAX_CHANGED_OBJECTS + 1 }, (_, i) => readyDeployment('live', `bulk-${i}`)),
      );
      await waitFor(() => queued.length > 0, 'the bulk snapshot', 5000);
      expect(changes[0]).toBeUndefined();
    } finally {
      live.close();
    }
  });

  it('snapshots during a steady stream of changes, at least once per max-wait', async () => {
    const { live, queued } = await watch({ debounceMs: 100, maxWaitMs: 200 });
    try {
      // A change every 20 ms for a second never leaves a 100 ms pause.
      for (let i = 0; i < 50; i++) {
        cluster.emulator.patchStatus(REF, i % 2 === 0 ? rollingStatus() : readyStatus());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(queued.length).toBeGreaterThanOrEqual(2);
    } finally {
      live.close();
    }
  });
});
