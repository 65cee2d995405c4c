import { CoreV1Api, makeInformer, Watch, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configMap, startHarness, waitFor, type Harness } from './helpers.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ bookmarkIntervalMs: 50 });
});
afterAll(async () => {
  await h.em.close();
});

interface Seen {
  type: string;
  name: string;
  rv: string;
  code?: number;
}

async function openWatch(
  path: string,
  params: Record<string, string | number | boolean | undefined>,
): Promise<{ events: Seen[]; done: () => boolean; stop: () => void; error: () => unknown }> {
  const events: Seen[] = [];
  let finished = false;
  let failure: unknown;
  const controller = await new Watch(h.kc).watch(
    path,
    params,
    (type, obj: { metadata?: { name?: string; resourceVersion?: string }; code?: number }) => {
      events.push({
        type,
        name: obj.metadata?.name ?? '',
        rv: obj.metadata?.resourceVersion ?? '',
        ...(obj.code !== undefined ? { code: obj.code } : {}),
      });
    },
    (err) => {
      finished = true;
      failure = err;
    },
  );
  return { events, done: () => finished, stop: () => controller.abort(), error: () => failure };
}

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED for changes after the list resourceVersion', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedConfigMap({ namespace: 'w1' });
    const w = await openWatch('/api/v1/namespaces/w1/configmaps', { resourceVersion: list.metadata?.resourceVersion });
    h.em.apply(configMap('a', 'w1'));
    h.em.apply(configMap('a', 'w1', {}, { k: 'v' }));
    h.em.apply(configMap('other-namespace', 'w2'));
    h.em.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'w1', name: 'a' });
    await waitFor('three events', () => (w.events.length >= 3 ? true : undefined));
    w.stop();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
    const rvs = w.events.map((e) => Number(e.rv));
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
  });

  it('replays history when started from an older resourceVersion', async () => {
    const from = h.em.resourceVersion();
    h.em.apply(configMap('r1', 'w3'));
    h.em.apply(configMap('r2', 'w3'));
    const w = await openWatch('/api/v1/namespaces/w3/configmaps', { resourceVersion: String(from) });
    await waitFor('two replayed events', () => (w.events.length >= 2 ? true : undefined));
    w.stop();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED r1', 'ADDED r2']);
  });

  it('sends synthetic ADDED events for existing objects when no resourceVersion is given', async () => {
    h.em.apply([configMap('s1', 'w4'), configMap('s2', 'w4', { keep: 'yes' })]);
    const w = await openWatch('/api/v1/namespaces/w4/configmaps', { labelSelector: 'keep=yes' });
    await waitFor('initial event', () => (w.events.length >= 1 ? true : undefined));
    w.stop();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED s2']);
  });

  it('reports objects entering and leaving a label selector as ADDED and DELETED', async () => {
    const w = await openWatch('/api/v1/namespaces/w9/configmaps', {
      resourceVersion: String(h.em.resourceVersion()),
      labelSelector: 'phase=blue',
    });
    h.em.apply(configMap('mover', 'w9', { phase: 'green' }));
    h.em.apply(configMap('mover', 'w9', { phase: 'blue' }));
    h.em.apply(configMap('mover', 'w9', { phase: 'blue' }, { changed: 'yes' }));
    h.em.apply(configMap('mover', 'w9', { phase: 'green' }));
    await waitFor('three events', () => (w.events.length >= 3 ? true : undefined));
    w.stop();
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('sends BOOKMARK events when allowWatchBookmarks=true', async () => {
    const w = await openWatch('/api/v1/namespaces/w5/configmaps', {
      resourceVersion: String(h.em.resourceVersion()),
      allowWatchBookmarks: true,
    });
    const bookmark = await waitFor('a bookmark', () => w.events.find((e) => e.type === 'BOOKMARK'));
    w.stop();
    expect(Number(bookmark.rv)).toBeGreaterThan(0);
  });

  it('sends no BOOKMARK events unless asked', async () => {
    const w = await openWatch('/api/v1/namespaces/w5/configmaps', {
      resourceVersion: String(h.em.resourceVersion()),
      timeoutSeconds: 1,
    });
    await waitFor('the watch to time out', () => (w.done() ? true : undefined), 5000);
    expect(w.events).toEqual([]);
  });

  it('ends the stream after timeoutSeconds', async () => {
    const w = await openWatch('/api/v1/configmaps', {
      resourceVersion: String(h.em.resourceVersion()),
      timeoutSeconds: 1,
    });
    await waitFor('the watch to end', () => (w.done() ? true : undefined), 5000);
    expect(w.error()).toBeNull();
  });

  it('streams initial events then a bookmark marking their end with sendInitialEvents=true', async () => {
    h.em.apply([configMap('ie-1', 'w7'), configMap('ie-2', 'w7')]);
    const annotations: Record<string, string>[] = [];
    const controller = await new Watch(h.kc).watch(
      '/api/v1/namespaces/w7/configmaps',
      { sendInitialEvents: true, allowWatchBookmarks: true, resourceVersionMatch: 'NotOlderThan' },
      (type, obj: { metadata?: { name?: string; annotations?: Record<string, string> } }) => {
        annotations.push({
          type,
          name: obj.metadata?.name ?? '',
          end: obj.metadata?.annotations?.['k8s.io/initial-events-end'] ?? '',
        });
      },
      () => undefined,
    );
    await waitFor('the end-of-initial-events bookmark', () =>
      annotations.some((a) => a['end'] === 'true') ? true : undefined,
    );
    controller.abort();
    expect(annotations.slice(0, 3)).toEqual([
      { type: 'ADDED', name: 'ie-1', end: '' },
      { type: 'ADDED', name: 'ie-2', end: '' },
      { type: 'BOOKMARK', name: '', end: 'true' },
    ]);
  });

  it('watches one object through the legacy /watch/ path', async () => {
    h.em.apply([configMap('one', 'w8'), configMap('two', 'w8')]);
    const w = await openWatch('/api/v1/watch/namespaces/w8/configmaps/two', {});
    h.em.apply(configMap('one', 'w8', { changed: 'yes' }));
    h.em.apply(configMap('two', 'w8', { changed: 'yes' }));
    await waitFor('two events', () => (w.events.length >= 2 ? true : undefined));
    w.stop();
    expect(w.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED two', 'MODIFIED two']);
  });

  it('answers a watch from before compact() with an ERROR event carrying a 410 Status', async () => {
    const from = h.em.resourceVersion();
    h.em.apply(configMap('gone', 'w6'));
    h.em.compact();
    const w = await openWatch('/api/v1/namespaces/w6/configmaps', { resourceVersion: String(from) });
    await waitFor('the stream to close', () => (w.done() ? true : undefined));
    expect(w.events).toEqual([{ type: 'ERROR', name: '', rv: '', code: 410 }]);
  });
});

describe('informer', () => {
  it('relists after 410 Gone and keeps its cache in step with the emulator', async () => {
    const core = h.kc.makeApiClient(CoreV1Api);
    h.em.apply(configMap('i1', 'inf'));
    const informer = makeInformer<V1ConfigMap>(h.kc, '/api/v1/namespaces/inf/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'inf' }),
    );
    const added: string[] = [];
    const deleted: string[] = [];
    informer.on('add', (o) => added.push(o.metadata?.name ?? ''));
    informer.on('delete', (o) => deleted.push(o.metadata?.name ?? ''));
    informer.on('error', () => undefined);
    await informer.start();
    await waitFor('initial add', () => (added.includes('i1') ? true : undefined));
    const listsBefore = h.em.requestCount({ verb: 'list', resource: 'configmaps', namespace: 'inf' });

    // Force a relist: the watch stream ends, meanwhile changes happen and history is compacted.
    h.em.closeWatches();
    h.em.apply(configMap('i2', 'inf'));
    h.em.remove({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'inf', name: 'i1' });
    h.em.compact();

    await waitFor('the informer to catch up', () =>
      added.includes('i2') && deleted.includes('i1') ? true : undefined,
    );
    await informer.stop();
    expect(informer.list().map((o) => o.metadata?.name)).toEqual(['i2']);
    expect(h.em.requestCount({ verb: 'list', resource: 'configmaps', namespace: 'inf' })).toBeGreaterThan(listsBefore);
  });
});
