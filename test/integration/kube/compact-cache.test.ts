/**
 * Watch mode keeps compact records (src/kube/compact.ts). A read answered from watch caches must
 * give the same statuses and revisions as the same read by LIST.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Phase } from '../../../src/inventory/types.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import type { ClusterClient } from '../../../src/kube/cluster-client.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { createWatchSet, type WatchSet } from '../../../src/kube/watch-set.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { connect, makeObject, refOf, startTestCluster, type TestCluster } from './helpers.ts';

const NOW = new Date();
const REDACTION = { dropAnnotations: ['example.com/token'] };
const KINDS = ['Deployment', 'StatefulSet', 'Service', 'ConfigMap', 'Secret', 'Job', 'Pod'] as const;
const GROUPS: Record<string, string> = { Deployment: 'apps', StatefulSet: 'apps', Job: 'batch' };

/** The resources of one declared phase listing `refs`, as observeCluster sees them (revision bodies read). */
async function observe(client: ClusterClient, refs: Phase['entries']): Promise<Record<string, unknown>> {
  const phase: Phase = {
    source: 'config',
    id: 'compact',
    name: 'compact',
    namespace: '',
    labels: {},
    entries: refs,
    details: {},
    errors: [],
  };
  const observation = await observeCluster(client, {
    now: () => NOW,
    declared: new Map([[client.name, [phase]]]),
    redaction: REDACTION,
  });
  if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
  const out: Record<string, unknown> = {};
  for (const r of observation.phases[0]?.resources ?? [])
    out[r.key] = {
      ...r,
      revision: r.revision === undefined ? undefined : { hash: r.revision.hash, body: r.revision.body },
    };
  return out;
}

describe('reads from compact watch caches', () => {
  let cluster: TestCluster;
  let set: WatchSet;
  const refs = KINDS.flatMap((kind) => ['a', 'b'].map((name) => refOf(kind, 'shop', `${kind.toLowerCase()}-${name}`)));
  beforeAll(async () => {
    cluster = await startTestCluster('compact');
    cluster.emulator.apply(
      KINDS.flatMap((kind) =>
        ['a', 'b'].map((name) => makeObject(kind, 'shop', `${kind.toLowerCase()}-${name}`, { tier: 'web' })),
      ),
    );
    const annotated = makeObject('Service', 'shop', 'service-a');
    annotated.metadata = {
      ...(annotated.metadata as object),
      annotations: { 'example.com/token': 'hunter2', team: 'shop' },
    };
    cluster.emulator.apply([annotated]);
    // A crash-looping pod selected by statefulset-a makes the pod-aware rule read pods from the cache.
    const crashing = makeObject('Pod', 'shop', 'statefulset-a-0');
    crashing.metadata = { name: 'statefulset-a-0', namespace: 'shop', labels: { app: 'statefulset-a' } };
    crashing.status = {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'db',
          ready: false,
          restartCount: 7,
          image: 'postgres:17',
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s' } },
        },
      ],
    };
    cluster.emulator.apply([crashing]);
    cluster.emulator.patchStatus(
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'deployment-a' },
      {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'ReplicaSetUpdated',
            message: 'progressing',
            lastUpdateTime: '2026-11-20T09:16:40Z',
          },
        ],
      },
    );
    set = createWatchSet(
      cluster.client,
      KINDS.map((kind) => ({ group: GROUPS[kind] ?? '', kind })),
    );
  });
  afterAll(async () => {
    set.stop();
    await cluster.close();
  });

  it('gives the statuses and revisions a LIST gives', async () => {
    const polling = connect(cluster.emulator, {}, 'compact');
    const fromList = await observe(polling, refs);
    expect([...(await set.start()).values()].every((e) => e === undefined)).toBe(true);
    const cached = await readObjects(cluster.client, refs, { includePods: true });
    expect(cached.stats.listRequests).toBe(0);
    expect(cached.records.size).toBe(refs.length);
    expect(await observe(cluster.client, refs)).toEqual(fromList);
    // A second tick answers unchanged objects from the records' memos: still the same.
    expect(await observe(cluster.client, refs)).toEqual(fromList);
    expect(fromList[refKey(refOf('StatefulSet', 'shop', 'statefulset-a'))]).toMatchObject({ status: 'Failed' });
    expect(fromList[refKey(refOf('Deployment', 'shop', 'deployment-a'))]).toMatchObject({ status: 'InProgress' });
    // Neither a Secret's data nor an annotation the snapshot drops is kept.
    const text = JSON.stringify(fromList);
    expect(text).not.toContain(Buffer.from('s3cret').toString('base64'));
    expect(text).not.toContain('hunter2');
    expect(text).toContain('"team":"shop"');
    polling.close();
  });

  it('polling ticks reuse revision hashes of unchanged object versions, and hash changed ones anew', async () => {
    const polling = connect(cluster.emulator, {}, 'compact');
    const first = await observe(polling, refs);
    expect(await observe(polling, refs)).toEqual(first);
    const key = refKey(refOf('Service', 'shop', 'service-b'));
    cluster.emulator.apply([
      {
        ...makeObject('Service', 'shop', 'service-b'),
        spec: { type: 'ClusterIP', clusterIP: '10.96.0.11', ports: [{ port: 81 }] },
      },
    ]);
    const second = await observe(polling, refs);
    expect((second[key] as { revision: { hash: string } }).revision.hash).not.toBe(
      (first[key] as { revision: { hash: string } }).revision.hash,
    );
    expect(second[key]).toMatchObject({ revision: { body: { spec: { ports: [{ port: 81 }] } } } });
    polling.close();
  });

  it('follows changes: the cached view and revision move with the object', async () => {
    cluster.emulator.apply([
      { ...makeObject('ConfigMap', 'shop', 'configmap-a'), data: { 'app.properties': 'name=changed' } },
    ]);
    cluster.emulator.patchStatus(
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'deployment-b' },
      { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 },
    );
    const polling = connect(cluster.emulator, {}, 'compact');
    const expected = await observe(polling, refs);
    polling.close();
    for (let i = 0; i < 200; i++) {
      if (JSON.stringify(await observe(cluster.client, refs)) === JSON.stringify(expected)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await observe(cluster.client, refs)).toEqual(expected);
    expect(expected[refKey(refOf('ConfigMap', 'shop', 'configmap-a'))]).toMatchObject({
      revision: { body: { data: { 'app.properties': 'name=changed' } } },
    });
    expect(expected[refKey(refOf('Deployment', 'shop', 'deployment-b'))]).toMatchObject({ observedGeneration: 1 });
  });
});
