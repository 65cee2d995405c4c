import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refKey } from '../../../src/inventory/ref-key.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { createWatchCache, type WatchCache, type WatchChange } from '../../../src/kube/watch-cache.ts';
import { createWatchSet } from '../../../src/kube/watch-set.ts';
import type { KubeError } from '../../../src/kube/errors.ts';
import { connect, makeObject, refOf, startTestCluster, waitFor, type TestCluster } from './helpers.ts';

describe('watch caches over real HTTP', () => {
  let cluster: TestCluster;
  let cache: WatchCache | undefined;
  beforeAll(async () => {
    cluster = await startTestCluster('watched', { bookmarkIntervalMs: 50 });
  });
  afterEach(() => {
    cache?.stop();
    cache = undefined;
    cluster.emulator.clearFaults();
  });
  afterAll(async () => cluster.close());

  it('lists, then emits a change within a second of a write', async () => {
    cluster.emulator.apply(makeObject('Deployment', 'shop', 'web'));
    cache = createWatchCache(cluster.client, { group: 'apps', kind: 'Deployment' }, 'shop');
    const changes: WatchChange[] = [];
    cache.on('change', (c) => changes.push(c));
    expect(await cache.start()).toBeUndefined();
    expect(cache.synced).toBe(true);
    expect(cache.get('shop', 'web')?.kind).toBe('Deployment');
    expect(changes.map((c) => c.type)).toEqual(['ADDED']);

    const started = Date.now();
    cluster.emulator.patchStatus(
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' },
      { readyReplicas: 2 },
    );
    await waitFor(() => changes.length === 2, 'a MODIFIED event', 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(changes[1]).toMatchObject({
      type: 'MODIFIED',
      ref: { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'web' },
    });
    expect(cache.get('shop', 'web')?.status).toMatchObject({ readyReplicas: 2 });

    cluster.emulator.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' });
    await waitFor(() => changes.length === 3, 'a DELETED event');
    expect(changes[2]?.type).toBe('DELETED');
    expect(cache.get('shop', 'web')).toBeUndefined();
  });

  it('tracks resourceVersion through bookmarks', async () => {
    cache = createWatchCache(cluster.client, { group: '', kind: 'ConfigMap' }, 'bookmarks');
    await cache.start();
    await waitFor(() => (cache?.stats.bookmarks ?? 0) >= 2, 'two bookmarks');
    expect(cache.resourceVersion).not.toBe('');
  });

  it('resumes from its resourceVersion when the server closes the watch, without relisting', async () => {
    cache = createWatchCache(cluster.client, { group: '', kind: 'ConfigMap' }, 'resume');
    const changes: WatchChange[] = [];
    cache.on('change', (c) => changes.push(c));
    await cache.start();
    await waitFor(() => cluster.emulator.closeWatches() > 0, 'an open watch to close');
    cluster.emulator.apply(makeObject('ConfigMap', 'resume', 'after-close'));
    await waitFor(() => changes.some((c) => c.ref.name === 'after-close'), 'the event written while reconnecting');
    expect(cache.stats.lists).toBe(1);
    expect(cache.stats.watches).toBeGreaterThanOrEqual(2);
  });

  it('relists after 410 Gone and reports what changed meanwhile', async () => {
    cluster.emulator.apply([makeObject('ConfigMap', 'gone', 'kept'), makeObject('ConfigMap', 'gone', 'deleted-later')]);
    cache = createWatchCache(cluster.client, { group: '', kind: 'ConfigMap' }, 'gone');
    const changes: WatchChange[] = [];
    cache.on('change', (c) => changes.push(c));
    await cache.start();
    changes.length = 0;
    // Make the cache's resourceVersion too old: refuse watches, write, compact, then let it reconnect.
    cluster.emulator.injectFault({ match: { verb: 'watch' }, effect: 'status', statusCode: 500 });
    cluster.emulator.closeWatches();
    cluster.emulator.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'gone', name: 'deleted-later' });
    cluster.emulator.apply(makeObject('ConfigMap', 'gone', 'new'));
    cluster.emulator.compact();
    cluster.emulator.clearFaults();
    await waitFor(() => (cache?.stats.relists ?? 0) >= 1, 'a relist');
    await waitFor(() => changes.length >= 2, 'the differences as events');
    expect(changes.map((c) => `${c.type} ${c.ref.name}`).sort()).toEqual(['ADDED new', 'DELETED deleted-later']);
    expect(
      cache
        .list()
        .map((o) => (o.metadata as { name: string }).name)
        .sort(),
    ).toEqual(['kept', 'new']);
  });

  it('reports failures as data and reconnects with backoff', async () => {
    cache = createWatchCache(cluster.client, { group: '', kind: 'ConfigMap' }, 'flaky', { initialBackoffMs: 10 });
    const failures: KubeError[] = [];
    cache.on('failure', (e) => failures.push(e));
    // A LIST reset on a reused keep-alive socket is sent once more on a fresh one (see transport.ts),
    // so one failed attempt takes one or two resets: four make at least two failed attempts.
    cluster.emulator.injectFault({ match: { verb: 'list', namespace: 'flaky' }, effect: 'reset', times: 4 });
    const first = await cache.start();
    expect(first?.kind).toBe('UNREACHABLE');
    await waitFor(() => cache?.synced === true, 'a sync after the faults end');
    expect(failures.length).toBeGreaterThanOrEqual(2);
    expect(failures.length).toBeLessThanOrEqual(4);
    expect(new Set(failures.map((f) => f.kind))).toEqual(new Set(['UNREACHABLE']));
  });

  it('gives up on a watch that never answers and reconnects', async () => {
    cache = createWatchCache(cluster.client, { group: '', kind: 'ConfigMap' }, 'hung', {
      connectTimeoutMs: 200,
      initialBackoffMs: 10,
    });
    const failures: KubeError[] = [];
    const names: string[] = [];
    cache.on('failure', (e) => failures.push(e));
    cache.on('change', (c) => names.push(c.ref.name));
    cluster.emulator.injectFault({ match: { verb: 'watch', namespace: 'hung' }, effect: 'hang', times: 1 });
    await cache.start();
    await waitFor(() => failures.length === 1, 'the hung watch to time out');
    expect(failures[0]?.kind).toBe('TIMEOUT');
    await waitFor(() => (cache?.stats.watches ?? 0) >= 2, 'a second watch');
    cluster.emulator.apply(makeObject('ConfigMap', 'hung', 'after-hang'));
    await waitFor(() => names.includes('after-hang'), 'an event on the new watch');
  });

  it('a cache of the set that lists again pulls the others out of their backoff, so a deletion is learned at once', async () => {
    cluster.emulator.apply([
      makeObject('Deployment', 'nudge', 'web'),
      makeObject('Deployment', 'nudge', 'doomed'),
      makeObject('ConfigMap', 'nudge', 'web'),
    ]);
    const client = connect(cluster.emulator, {}, 'nudge-cluster');
    // Waits far longer than the test: only the nudge can bring the Deployment cache back in time.
    const set = createWatchSet(
      client,
      [
        { group: 'apps', kind: 'Deployment' },
        { group: '', kind: 'ConfigMap' },
      ],
      { namespace: 'nudge', initialBackoffMs: 60_000, maxBackoffMs: 60_000 },
    );
    const seen: string[] = [];
    set.onChange((change) => seen.push(`${change.type} ${change.ref.kind}/${change.ref.name}`));
    try {
      await set.start();
      const deployments = set.caches.get('apps/Deployment');
      let failed = false;
      deployments?.on('failure', () => (failed = true));
      cluster.emulator.injectFault({ match: { resource: 'deployments' }, effect: 'reset' });
      cluster.emulator.closeWatches();
      await waitFor(() => failed, 'the Deployment watch to fail');
      cluster.emulator.remove({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'nudge', name: 'doomed' });
      cluster.emulator.clearFaults();
      // The ConfigMap cache is told its resourceVersion is gone, and relists.
      cluster.emulator.injectFault({
        match: { verb: 'watch', resource: 'configmaps' },
        effect: 'status',
        statusCode: 410,
        times: 1,
      });
      cluster.emulator.closeWatches();
      await waitFor(
        () => seen.includes('DELETED Deployment/doomed'),
        "the deletion, learned by the Deployment cache's relist",
        3000,
      );
    } finally {
      set.stop();
      client.close();
    }
  });

  it('an unserved kind fails with KIND_NOT_FOUND', async () => {
    cache = createWatchCache(cluster.client, { group: 'example.com', kind: 'Widget' }, undefined, {
      initialBackoffMs: 60_000,
    });
    expect((await cache.start())?.kind).toBe('KIND_NOT_FOUND');
  });

  it('lets the batched reader answer from the cache without a LIST', async () => {
    cluster.emulator.apply([makeObject('Service', 'cached', 'a'), makeObject('Service', 'cached', 'b')]);
    const client = connect(cluster.emulator);
    cache = createWatchCache(client, { group: '', kind: 'Service' }, 'cached');
    await cache.start();
    cluster.emulator.resetRequests();
    const refs = [refOf('Service', 'cached', 'a'), refOf('Service', 'cached', 'b'), refOf('Service', 'cached', 'c')];
    const result = await readObjects(client, refs);
    expect(result.objects.size + result.records.size).toBe(2);
    expect(result.missing.map(refKey)).toEqual([refKey(refOf('Service', 'cached', 'c'))]);
    expect(result.stats).toEqual({ listRequests: 0, cacheReads: 1 });
    expect(cluster.emulator.requestCount({ verb: 'list' })).toBe(0);
    cache.stop();
    const polled = await readObjects(client, refs);
    expect(polled.stats.listRequests).toBe(1);
    client.close();
  });

  it('a watch set covers every kind of a phase: the next tick sends no LIST and changes arrive as events', async () => {
    const refs = [refOf('Deployment', 'set', 'web'), refOf('Service', 'set', 'web'), refOf('ConfigMap', 'set', 'web')];
    cluster.emulator.apply([
      makeObject('Deployment', 'set', 'web'),
      makeObject('Service', 'set', 'web'),
      makeObject('ConfigMap', 'set', 'web'),
    ]);
    const client = connect(cluster.emulator, {}, 'set-cluster');
    const set = createWatchSet(
      client,
      refs.map((r) => ({ group: r.group, kind: r.kind })),
    );
    const seen: string[] = [];
    set.onChange((change, name) => seen.push(`${name} ${change.type} ${change.ref.kind}/${change.ref.name}`));
    try {
      const outcomes = await set.start();
      expect([...outcomes.values()]).toEqual([undefined, undefined, undefined]);
      cluster.emulator.resetRequests();
      const result = await readObjects(client, refs);
      expect(result.objects.size + result.records.size).toBe(3);
      expect(result.stats.listRequests).toBe(0);
      expect(cluster.emulator.requestCount({ verb: 'list' })).toBe(0);
      cluster.emulator.patchStatus(
        { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'set', name: 'web' },
        { replicas: 2 },
      );
      await waitFor(() => seen.includes('set-cluster MODIFIED Deployment/web'), 'the change from the set');
    } finally {
      set.stop();
      client.close();
    }
  });
});
