/**
 * Prisma's debug module keeps its last 100 lines for error reports whatever DEBUG says, and the pg
 * adapter's line for each query holds the query's parameters: after a snapshot, the changed
 * resources' statuses and redacted object revisions, held in the worker's memory (~10 MB per
 * 10,000 changed resources) and printed in any Prisma error report. A snapshot's transaction runs
 * on pg directly (src/store/sql-transaction.ts), so none of its parameters get there.
 */
import { getLogs } from '@prisma/debug';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { inventoryConfigMap, readyDeployment } from './fleet.ts';
import {
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

describe("Prisma's debug history after a snapshot", () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;
  let deps: SnapshotDeps;
  const marker = uniqueId('image-marker');

  beforeAll(async () => {
    database = await createTestDatabase('debug_history');
    cluster = await startEmulatedCluster('debug-history');
    const deployment = readyDeployment('shop', 'web');
    const spec = deployment.spec as { template: { spec: { containers: { image: string }[] } } };
    spec.template.spec.containers[0] = {
      ...spec.template.spec.containers[0],
      image: `registry.example/${marker}:1`,
    } as { image: string };
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } },
      deployment,
      inventoryConfigMap('shop', 'inventory', 'shop', [['shop', 'apps', 'Deployment', 'web']]),
    ]);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('debug') });
    deps = { recorder: createRecorder(createSnapshotStore(database.db)), publisher, log: testLogger() };
  });
  afterAll(async () => {
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  it('holds none of the revisions the snapshot stored', async () => {
    expect(await snapshotCluster(deps, cluster.client, new Date())).toMatchObject({ written: true, changes: 3 });
    // The revision is stored, with the image in it ...
    const revisions = await database.db.objectRevision.findMany();
    expect(revisions.map((r) => JSON.stringify(r.object)).filter((o) => o.includes(marker))).toHaveLength(1);
    // ... and the findMany above is in the debug history, but not the snapshot's insert.
    expect(getLogs()).toContain('ObjectRevision');
    expect(getLogs()).not.toContain(marker);
  });
});
