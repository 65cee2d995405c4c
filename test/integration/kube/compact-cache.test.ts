/**
 * Watch mode keeps compact records (src/kube/compact.ts). A read answered from watch caches must
 * give the same statuses and revisions as the same read by LIST.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashRedacted } from '../../../src/history/redact.ts';
import { refKey } from '../../../src/inventory/ref-key.ts';
import { toHashedDocument } from '../../../src/kube/compact.ts';
import { readObjects, type ReadObjectsResult } from '../../../src/kube/read-objects.ts';
import { createWatchSet, type WatchSet } from '../../../src/kube/watch-set.ts';
import { computeStatus } from '../../../src/status/compute.ts';
import { connect, makeObject, refOf, startTestCluster, type TestCluster } from './helpers.ts';

const NOW = new Date();
const KINDS = ['Deployment', 'StatefulSet', 'Service', 'ConfigMap', 'Secret', 'Job', 'Pod'] as const;
const GROUPS: Record<string, string> = { Deployment: 'apps', StatefulSet: 'apps', Job: 'batch' };

function observe(read: ReadObjectsResult, redaction = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, object] of read.objects) {
    const cached = read.revisions.get(key);
    const revision = cached !== undefined ? toHashedDocument(cached, redaction) : hashRedacted(object, redaction);
    out[key] = { status: computeStatus(object, { now: NOW, pods: read.pods }), hash: revision.hash, body: revision.body };
  }
  return out;
}

describe('reads from compact watch caches', () => {
  let cluster: TestCluster;
  let set: WatchSet;
  const refs = KINDS.flatMap((kind) => ['a', 'b'].map((name) => refOf(kind, 'shop', `${kind.toLowerCase()}-${name}`)));
  beforeAll(async () => {
    cluster = await startTestCluster('compact');
    cluster.emulator.apply(KINDS.flatMap((kind) => ['a', 'b'].map((name) => makeObject(kind, 'shop', `${kind.toLowerCase()}-${name}`, { tier: 'web' }))));
    // A crash-looping pod selected by statefulset-a makes the pod-aware rule read pods from the cache.
    const crashing = makeObject('Pod', 'shop', 'statefulset-a-0');
    crashing.metadata = { name: 'statefulset-a-0', namespace: 'shop', labels: { app: 'statefulset-a' } };
    crashing.status = { phase: 'Running', containerStatuses: [{ name: 'db', ready: false, restartCount: 7, image: 'postgres:17', state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s' } } }] };
    cluster.emulator.apply([crashing]);
    cluster.emulator.patchStatus({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'deployment-a' }, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated', message: 'progressing', lastUpdateTime: '2026-11-20T09:16:40Z' }] });
    set = createWatchSet(cluster.client, KINDS.map((kind) => ({ group: GROUPS[kind] ?? '', kind })));
  });
  afterAll(async () => {
    set.stop();
    await cluster.close();
  });

  it('gives the statuses and revisions a LIST gives', async () => {
    const listed = await readObjects(connect(cluster.emulator), refs, { includePods: true });
    expect(listed.stats.cacheReads).toBe(0);
    expect([...(await set.start()).values()].every((e) => e === undefined)).toBe(true);
    const cached = await readObjects(cluster.client, refs, { includePods: true });
    expect(cached.stats.listRequests).toBe(0);
    expect(cached.revisions.size).toBe(refs.length);
    const fromList = observe(listed);
    expect(observe(cached)).toEqual(fromList);
    expect(fromList[refKey(refOf('StatefulSet', 'shop', 'statefulset-a'))]).toMatchObject({ status: { status: 'Failed' } });
    expect(fromList[refKey(refOf('Deployment', 'shop', 'deployment-a'))]).toMatchObject({ status: { status: 'InProgress' } });
    // A Secret's data is in neither.
    expect(JSON.stringify(observe(cached))).not.toContain(Buffer.from('s3cret').toString('base64'));
  });

  it('follows changes: the cached view and revision move with the object', async () => {
    cluster.emulator.apply([{ ...makeObject('ConfigMap', 'shop', 'configmap-a'), data: { 'app.properties': 'name=changed' } }]);
    cluster.emulator.patchStatus({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'deployment-b' }, { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 });
    const expected = observe(await readObjects(connect(cluster.emulator), refs, { includePods: true }));
    const cmKey = refKey(refOf('ConfigMap', 'shop', 'configmap-a'));
    for (let i = 0; i < 200; i++) {
      const now = observe(await readObjects(cluster.client, refs, { includePods: true }));
      if (JSON.stringify(now[cmKey]) === JSON.stringify(expected[cmKey]) && JSON.stringify(now) === JSON.stringify(expected)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(observe(await readObjects(cluster.client, refs, { includePods: true }))).toEqual(expected);
    expect(expected[cmKey]).toMatchObject({ body: { data: { 'app.properties': 'name=changed' } } });
  });
});
