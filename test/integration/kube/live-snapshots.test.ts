/**
 * Live snapshots' debounce: a burst of changes becomes one snapshot, and a steady stream of changes
 * still snapshots while it lasts (max-wait), instead of waiting for a pause that never comes.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveSnapshots, type LiveSnapshots } from '../../../workers/live-snapshots.ts';
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

  async function watch(options: { debounceMs: number; maxWaitMs: number }): Promise<{ live: LiveSnapshots; queued: number[] }> {
    const queued: number[] = [];
    const live = await startLiveSnapshots([cluster.client], async (_name, tickAt) => queued.push(tickAt), pino({ level: 'silent' }), options);
    // The initial list emits ADDED events: let their snapshot go by first.
    await waitFor(() => queued.length > 0, 'the snapshot of the initial list', 5000);
    await new Promise((resolve) => setTimeout(resolve, options.debounceMs * 2));
    queued.length = 0;
    return { live, queued };
  }

  it('turns a burst of changes into one snapshot', async () => {
    const { live, queued } = await watch({ debounceMs: 400, maxWaitMs: 5000 });
    try {
      for (let i = 0; i < 5; i++) cluster.emulator.patchStatus(REF, i % 2 === 0 ? rollingStatus() : readyStatus());
      await waitFor(() => queued.length > 0, 'the burst snapshot', 5000);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(queued).toHaveLength(1);
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
