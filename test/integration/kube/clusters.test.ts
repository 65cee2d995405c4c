import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import {
  loadClusters,
  loadInClusterCluster,
  loadKubeconfigClusters,
  type ClusterHandle,
} from '../../../src/kube/clusters.ts';
import { clustersConfigSchema } from '../../../src/kube/config.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { makeObject, refOf } from './helpers.ts';

const TOKEN = 'phaselog-test-token';

/** One kubeconfig whose contexts `alpha` and `beta` point at two emulators. */
function mergeKubeconfigs(entries: Array<[string, Emulator]>): string {
  const merged = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [] as unknown[],
    users: [] as unknown[],
    contexts: [] as unknown[],
    'current-context': entries[0]?.[0],
  };
  for (const [name, emulator] of entries) {
    const doc = parse(emulator.kubeconfig()) as {
      clusters: Array<{ cluster: unknown }>;
      users: Array<{ user: unknown }>;
    };
    merged.clusters.push({ name, cluster: doc.clusters[0]?.cluster });
    merged.users.push({ name, user: doc.users[0]?.user });
    merged.contexts.push({ name, context: { cluster: name, user: name } });
  }
  return stringify(merged);
}

async function readsDeployment(handle: ClusterHandle): Promise<boolean> {
  const client = createClusterClient(handle, { transport: { timeoutMs: 2000 } });
  try {
    const result = await readObjects(client, [refOf('Deployment', 'shop', 'web')]);
    return result.objects.size === 1;
  } finally {
    client.close();
  }
}

describe('loading clusters', () => {
  let alpha: Emulator;
  let beta: Emulator;
  let dir: string;
  let kubeconfigPath: string;

  beforeAll(async () => {
    alpha = await startEmulator({ port: 0 });
    beta = await startEmulator({ port: 0, token: TOKEN });
    for (const e of [alpha, beta]) e.apply(makeObject('Deployment', 'shop', 'web'));
    dir = mkdtempSync(join(tmpdir(), 'phaselog-kube-'));
    kubeconfigPath = join(dir, 'kubeconfig.yaml');
    writeFileSync(
      kubeconfigPath,
      mergeKubeconfigs([
        ['alpha', alpha],
        ['beta', beta],
      ]),
      { mode: 0o600 },
    );
  });
  afterAll(async () => {
    await Promise.all([alpha.close(), beta.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads every context of a kubeconfig as a cluster, token auth included', async () => {
    const { clusters, errors } = loadKubeconfigClusters({ path: kubeconfigPath, labels: { env: 'test' } });
    expect(errors).toEqual([]);
    expect(clusters.map((c) => [c.name, c.labels, c.server])).toEqual([
      ['alpha', { env: 'test' }, alpha.url],
      ['beta', { env: 'test' }, beta.url],
    ]);
    for (const cluster of clusters) expect(await readsDeployment(cluster)).toBe(true);
  });

  it('loads a chosen subset of contexts and reports unknown ones', () => {
    const { clusters, errors } = loadKubeconfigClusters({ path: kubeconfigPath, contexts: ['beta', 'gamma'] });
    expect(clusters.map((c) => c.name)).toEqual(['beta']);
    expect(errors).toEqual([{ cluster: 'gamma', message: expect.stringContaining('"gamma"') }]);
  });

  it('reports an unreadable kubeconfig instead of throwing', () => {
    const result = loadKubeconfigClusters({ path: join(dir, 'missing.yaml') });
    expect(result.clusters).toEqual([]);
    expect(result.errors[0]?.message).toContain('missing.yaml');
  });

  it('loads config entries of every shape, and bad entries become errors', async () => {
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const config = clustersConfigSchema.parse([
      { kubeconfig: kubeconfigPath, context: 'alpha', name: 'prod-eu', labels: { region: 'eu' } },
      { name: 'beta-token', server: beta.url, token: TOKEN },
      { name: 'beta-token-file', server: beta.url, tokenFile },
      { name: 'beta-wrong', server: beta.url, token: 'nope' },
      { name: 'beta-no-file', server: beta.url, tokenFile: join(dir, 'absent') },
    ]);
    const { clusters, errors } = loadClusters(config);
    expect(clusters.map((c) => c.name)).toEqual(['prod-eu', 'beta-token', 'beta-token-file', 'beta-wrong']);
    expect(clusters[0]?.labels).toEqual({ region: 'eu' });
    expect(errors).toEqual([{ cluster: 'beta-no-file', message: expect.stringContaining('does not exist') }]);
    expect(JSON.stringify(clusters)).not.toContain(TOKEN);
    expect(JSON.parse(JSON.stringify(clusters[1]))).toEqual({ name: 'beta-token', labels: {}, server: beta.url });
    const [prod, byToken, byFile, wrong] = clusters;
    if (prod === undefined || byToken === undefined || byFile === undefined || wrong === undefined)
      throw new Error('clusters missing');
    expect(await readsDeployment(prod)).toBe(true);
    expect(await readsDeployment(byToken)).toBe(true);
    expect(await readsDeployment(byFile)).toBe(true);
    const client = createClusterClient(wrong);
    const denied = await readObjects(client, [refOf('Deployment', 'shop', 'web')]);
    client.close();
    expect(denied.clusterError?.kind).toBe('UNAUTHORIZED');
    expect(denied.missing).toEqual([]);
  });

  it('in-cluster loading outside a pod is an error, not a throw', () => {
    expect(loadInClusterCluster({}).errors[0]?.message).toContain('KUBERNETES_SERVICE_HOST');
  });

  it('in-cluster loading without a mounted token names the file', () => {
    const sa = mkdtempSync(join(dir, 'sa-empty-'));
    writeFileSync(join(sa, 'ca.crt'), 'not used');
    const result = loadInClusterCluster({ serviceHost: '10.0.0.1', servicePort: '443', serviceAccountDir: sa });
    expect(result.clusters).toEqual([]);
    expect(result.errors[0]?.message).toContain(join(sa, 'token'));
  });

  it('in-cluster: the API server from KUBERNETES_SERVICE_HOST/PORT (IPv6 in brackets), the token re-read when the kubelet rotates it', async () => {
    const tls = await startEmulator({ port: 0, tls: true, token: TOKEN });
    try {
      tls.apply(makeObject('Deployment', 'shop', 'web'));
      const sa = mkdtempSync(join(dir, 'sa-'));
      const doc = parse(tls.kubeconfig()) as { clusters: Array<{ cluster: Record<string, string> }> };
      writeFileSync(
        join(sa, 'ca.crt'),
        Buffer.from(doc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64'),
      );
      writeFileSync(join(sa, 'token'), 'token-before-rotation');
      const v6 = loadInClusterCluster({
        name: 'home',
        serviceHost: 'fd00::1',
        servicePort: '6443',
        serviceAccountDir: sa,
      }).clusters[0];
      expect(v6?.server).toBe('https://[fd00::1]:6443');
      const handle = loadInClusterCluster({
        name: 'home',
        serviceHost: '127.0.0.1',
        servicePort: new URL(tls.url).port,
        serviceAccountDir: sa,
      }).clusters[0];
      if (handle === undefined) throw new Error('no cluster');
      expect(handle.name).toBe('home');
      expect(await readsDeployment(handle)).toBe(false);
      writeFileSync(join(sa, 'token'), TOKEN);
      expect(await readsDeployment(handle)).toBe(true);
    } finally {
      await tls.close();
    }
  });
});

describe('clustersConfigSchema', () => {
  it.each([
    ['a whole kubeconfig', [{ kubeconfig: '/etc/kube/config' }]],
    [
      'some contexts of a kubeconfig',
      [{ kubeconfig: '/etc/kube/config', contexts: ['a', 'b'], labels: { team: 'x' } }],
    ],
    [
      'a server with a token file and CA',
      [{ name: 'edge', server: 'https://10.0.0.1:6443', tokenFile: '/run/token', caFile: '/run/ca.crt' }],
    ],
    ['the in-cluster service account', [{ name: 'home', inCluster: true }]],
  ])('accepts %s', (_label, value) => {
    expect(clustersConfigSchema.safeParse(value).success).toBe(true);
  });

  it.each([
    ['two modes at once', [{ name: 'x', server: 'https://a', inCluster: true }], 'exactly one'],
    ['no mode', [{ name: 'x' }], 'exactly one'],
    ['a token without a server', [{ name: 'x', inCluster: true, token: 't' }], 'token needs server'],
    ['a single context without a name', [{ kubeconfig: '/k', context: 'a' }], 'needs a name'],
    ['token and tokenFile together', [{ name: 'x', server: 'https://a', token: 't', tokenFile: '/t' }], 'not both'],
    ['a server that is not a URL', [{ name: 'x', server: 'not a url' }], 'URL'],
    [
      'duplicate names',
      [
        { name: 'x', inCluster: true },
        { name: 'x', server: 'https://a' },
      ],
      'duplicate cluster name',
    ],
    ['an unknown field', [{ name: 'x', inCluster: true, password: 'p' }], 'password'],
  ])('rejects %s with a clear message', (_label, value, fragment) => {
    const parsed = clustersConfigSchema.safeParse(value);
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(JSON.stringify(parsed.error.issues)).toContain(fragment);
  });
});
