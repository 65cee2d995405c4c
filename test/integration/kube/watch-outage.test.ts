/**
 * After an API outage the watches come back within the configured backoff cap and relist, so a
 * deletion made during the outage is learned (and a live snapshot queued) soon after the API
 * returns, not one long backoff later or at the next scheduled tick.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ChangedObjects } from '../../../src/inventory/affected-phases.ts';
import { startLiveSnapshots } from '../../../src/snapshot/live.ts';
import { inventoryConfigMap, readyDeployment } from '../snapshot/fleet.ts';
import { startTestCluster, waitFor, type TestCluster } from './helpers.ts';

/**
 * Longer than the old backoff's growth (0.25, 0.5, 1, 2, 4 s waits, each ±20 %): its fifth reconnect
 * has failed by then and the next wait is at least 6.4 s, so a watch with the old backoff is still
 * down more than 3 s after the API returns.
 */
const OUTAGE_MS = 9_500;
/** How soon after the API returns the deletion must be learned: the cap (0.5 s) plus a relist, with room for a loaded machine. */
const LEARNED_WITHIN_MS = 3_000;

describe('watches after an API outage', () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster('outage');
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      readyDeployment('shop', 'web'),
      readyDeployment('shop', 'doomed'),
      inventoryConfigMap('shop', 'inventory', 'shop-phase', [
        ['shop', 'apps', 'Deployment', 'web'],
        ['shop', 'apps', 'Deployment', 'doomed'],
      ]),
    ]);
  });
  afterAll(async () => cluster.close());

  it('relists within the configured backoff cap and queues a snapshot naming an object deleted during the outage', async () => {
    const queued: { at: number; changed: ChangedObjects | undefined }[] = [];
    const live = await startLiveSnapshots(
      [cluster.client],
      async (_name, _tickAt, changed) => void queued.push({ at: Date.now(), changed }),
      pino({ level: 'silent' }),
      {
        debounceMs: 25,
        watchBackoffMaxMs: 500,
      },
    );
    try {
      await waitFor(() => queued.length > 0, 'the snapshot of the first lists');
      cluster.emulator.injectFault({ effect: 'reset' });
      cluster.emulator.closeWatches();
      cluster.emulator.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'doomed' });
      // The outage is the fault being injected: its length is the test's input, not a wait for a result.
      const outageEnds = Date.now() + OUTAGE_MS;
      await waitFor(() => Date.now() >= outageEnds, 'the end of the outage', OUTAGE_MS + 1000);
      cluster.emulator.clearFaults();
      const returnedAt = Date.now();
      // A snapshot queued after the API returned, of the deleted object (or of the whole cluster).
      const ofDeletion = ({ at, changed }: (typeof queued)[number]): boolean =>
        at >= returnedAt && (changed === undefined || changed.objects.some((ref) => ref.name === 'doomed'));
      await waitFor(() => queued.some(ofDeletion), 'a live snapshot of the deletion', LEARNED_WITHIN_MS);
    } finally {
      live.close();
    }
  }, 30_000);
});
