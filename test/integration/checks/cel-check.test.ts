/**
 * A `cel` check over the demo's `api` phase (a ResourceGroup of a Service and a Deployment, as the
 * demo seeds it): "every Deployment's image ends with the phase's version" flips to False when the
 * Deployment's image changes in the emulator and back when it matches again, recorded by the
 * snapshot use case with its own time; an expression error is Unknown, never a failed snapshot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema } from '../../../src/checks/config.ts';
import { namespaceObject, readyDeployment, ref, resourceGroup, service } from '../../../src/demo/objects.ts';
import type { ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import type { StatusChange } from '../../../src/history/types.ts';
import { createCelChecks } from '../../../src/services/run-cel-checks.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster } from '../../../src/snapshot/snapshot-cluster.ts';
import { createConditionStore } from '../../../src/store/condition-store.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import {
  createTestDatabase,
  startEmulatedCluster,
  testLogger,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';

const NS = 'shop';
const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute));

describe('cel checks', () => {
  let db: TestDatabase;
  let cluster: EmulatedCluster;
  const published: StatusChange[] = [];
  const publisher: ChangePublisher = {
    publish: async (changes) => void published.push(...changes),
    close: async () => undefined,
  };

  beforeAll(async () => {
    db = await createTestDatabase('cel_checks');
    cluster = await startEmulatedCluster('demo-staging');
    const api = resourceGroup(NS, 'api', [ref('Service', NS, 'api'), ref('Deployment', NS, 'api')]);
    (api.metadata as { labels?: Record<string, string> }).labels = { version: '1.0.0' };
    cluster.emulator.apply([
      namespaceObject(NS),
      service(NS, 'api'),
      readyDeployment(NS, 'api', 2, 'example/api:1.0.0'),
      api,
    ]);
  });
  afterAll(async () => {
    await cluster?.close();
    await db?.drop();
  });

  it("flips when a Deployment image changes, and is published with the snapshot's changes", async () => {
    const checks = [
      checkSchema.parse({
        name: 'version',
        select: { namespaces: [NS] },
        cel: {
          expr: "objects.filter(o, o.kind == 'Deployment').all(o, o.spec.template.spec.containers.all(c, c.image.endsWith(':' + phase.labels.version)))",
        },
      }),
      checkSchema.parse({ name: 'broken', cel: { expr: 'objects[0].spec.nope.deeper == 1' } }),
    ];
    const cel = createCelChecks({ conditions: createConditionStore(db.workerDb), log: testLogger() }, checks);
    const deps = {
      recorder: createRecorder(createSnapshotStore(db.workerDb)),
      publisher,
      log: testLogger(),
      afterRecord: (o: Parameters<typeof cel.afterSnapshot>[0]) => cel.afterSnapshot(o, 30_000),
    };
    const store = createConditionStore(db.workerDb);
    const version = async () => {
      const [id] = (await store.phaseIds('demo-staging')).values();
      return (await store.currentConditions([id as number]))
        .get(id as number)
        ?.map((c) => [c.type, c.status, c.reason, c.from.toISOString()]);
    };
    // Conditions take the observation's time (the reads' clock), as the phase statuses do.
    const snapshot = async (minute: number) => snapshotCluster(deps, cluster.client, at(minute));

    expect(await snapshot(0)).toMatchObject({ written: true });
    expect(await version()).toEqual([
      ['broken', 'Unknown', 'EvaluationError', expect.any(String)],
      ['version', 'True', 'ExpressionTrue', expect.any(String)],
    ]);

    cluster.emulator.apply([readyDeployment(NS, 'api', 2, 'example/api:1.1.0')]);
    await snapshot(1);
    const flipped = await version();
    expect(flipped?.find((c) => c[0] === 'version')).toEqual([
      'version',
      'False',
      'ExpressionFalse',
      expect.any(String),
    ]);
    expect(
      published.filter((c) => c.scope === 'condition' && c.conditionType === 'version').map((c) => c.toStatus),
    ).toEqual(['True', 'False']);

    cluster.emulator.apply([readyDeployment(NS, 'api', 2, 'example/api:1.0.0')]);
    await snapshot(2);
    expect((await version())?.find((c) => c[0] === 'version')?.[1]).toBe('True');
    const intervals = await store.conditionIntervals(
      (await store.phaseIds('demo-staging')).values().next().value as number,
      { from: new Date(0), to: new Date(Date.now() + 60_000) },
    );
    const versionIntervals = intervals.filter((i) => i.type === 'version');
    expect(versionIntervals.map((i) => i.status)).toEqual(['True', 'False', 'True']);
    // The broken expression stays Unknown: one change (its first), nothing more.
    expect(published.filter((c) => c.conditionType === 'broken')).toHaveLength(1);
  });

  it('refuses an expression that does not parse at load', () => {
    const parsed = checkSchema.safeParse({ name: 'bad', cel: { expr: 'objects.all(o, ' } });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['cel', 'expr']);
  });
});
