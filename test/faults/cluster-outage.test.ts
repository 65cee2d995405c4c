/**
 * Fault: the cluster's API server goes away (every request reset, watches cut) while the phase
 * changes, and comes back. phaselog must record the outage and the change made during it exactly
 * once, refuse gates while it cannot see the cluster, and stay ready (it is recording the outage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testRedisUrl, type TestDatabase } from '../helpers/services.ts';
import { createFaultBed, FAULT_MS, RECOVERY_MS, type FaultBed } from './harness.ts';

describe('fault: cluster outage', () => {
  let database: TestDatabase;
  let bed: FaultBed;

  beforeAll(async () => {
    database = await createTestDatabase('fault_outage');
    bed = await createFaultBed({ label: 'outage', redisUrl: testRedisUrl(), databaseUrl: database.url });
  });
  afterAll(async () => {
    await bed?.close();
    await database?.drop();
  });

  it('records the outage and the change made during it once, and no gate passes while the cluster is unseen', async () => {
    await bed.start('all');
    await bed.markBaseline();
    bed.startPolling();

    // Long enough that phaselog must have noticed it cannot see the cluster.
    await bed.clusterOutage(FAULT_MS, () => bed.drive('InProgress'));
    const outageEnd = Date.now();

    await bed.waitRecorded('the change made during the outage to be recorded after it', RECOVERY_MS);
    bed.drive('Current');
    await bed.waitRecorded('the change after the outage to be recorded', RECOVERY_MS);

    const log = await bed.readLog();
    expect(bed.clusterRows(log), bed.output()).toEqual(['Reachable->Unreachable', 'Unreachable->Reachable']);
    expect(bed.readyAfter(outageEnd).ready, 'phaselog is ready once the cluster is back').toBe(true);
    expect(await bed.verdict()).toEqual([]);
  }, 120_000);
});
