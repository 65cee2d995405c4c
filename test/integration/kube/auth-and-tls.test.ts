import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { createWatchCache } from '../../../src/kube/watch-cache.ts';
import { makeObject, refOf, waitFor } from './helpers.ts';

const TOKEN = 'exec-issued-token';

/** The emulator's kubeconfig with its user replaced. */
function withUser(emulator: Emulator, user: Record<string, unknown>): string {
  const doc = parse(emulator.kubeconfig()) as { users: Array<{ name: string; user: unknown }> };
  doc.users = doc.users.map((u) => ({ ...u, user }));
  return stringify(doc);
}

describe('authentication and TLS through KubeConfig', () => {
  let tlsEmulator: Emulator;
  beforeAll(async () => {
    tlsEmulator = await startEmulator({ port: 0, tls: true, token: TOKEN });
    tlsEmulator.apply([makeObject('Deployment', 'shop', 'web'), makeObject('ConfigMap', 'shop', 'web')]);
  });
  afterAll(async () => tlsEmulator.close());

  it('reads over HTTPS, trusting the CA from the kubeconfig, with a bearer token', async () => {
    expect(tlsEmulator.url.startsWith('https://')).toBe(true);
    const handle = loadKubeconfigClusters({ yaml: tlsEmulator.kubeconfig() }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const client = createClusterClient(handle);
    try {
      const result = await readObjects(client, [refOf('Deployment', 'shop', 'web'), refOf('ConfigMap', 'shop', 'web')]);
      expect(result.errors).toEqual([]);
      expect(result.objects.size).toBe(2);
    } finally {
      client.close();
    }
  });

  it('gets its token from an exec credential plugin', async () => {
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: TOKEN },
    });
    const yaml = withUser(tlsEmulator, {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: process.execPath,
        args: ['-e', `process.stdout.write(${JSON.stringify(credential)})`],
        interactiveMode: 'Never',
      },
    });
    const handle = loadKubeconfigClusters({ yaml }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const client = createClusterClient(handle);
    try {
      const result = await readObjects(client, [refOf('Deployment', 'shop', 'web')]);
      expect(result.errors).toEqual([]);
      expect(result.objects.size).toBe(1);
    } finally {
      client.close();
    }
  });

  it.each([
    [
      'prints a bare token instead of an ExecCredential',
      `process.stdout.write('plugin-secret-7f3a')`,
      /not an ExecCredential/,
    ],
    [
      'exits with an error, saying the token on stderr',
      `process.stderr.write('refresh failed for plugin-secret-7f3a'); process.exit(1)`,
      /exited with an error/,
    ],
  ])(
    'an exec credential plugin that %s: the cluster error says so without the plugin output',
    async (_label, script, says) => {
      const yaml = withUser(tlsEmulator, {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: ['-e', script],
          interactiveMode: 'Never',
        },
      });
      const handle = loadKubeconfigClusters({ yaml }).clusters[0];
      if (handle === undefined) throw new Error('no cluster');
      const client = createClusterClient(handle);
      try {
        const result = await readObjects(client, [refOf('Deployment', 'shop', 'web')]);
        const message = result.clusterError?.message ?? result.errors[0]?.error.message ?? '';
        expect(message).toContain(`cannot load the credentials for ${tlsEmulator.url}`);
        expect(message).toMatch(says);
        // Stored with the cluster's reachability and served to every reader: never the plugin's output.
        expect(JSON.stringify(result)).not.toContain('plugin-secret-7f3a');
      } finally {
        client.close();
      }
    },
  );

  it('an untrusted certificate is UNREACHABLE, never NotFound', async () => {
    const doc = parse(tlsEmulator.kubeconfig()) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    for (const c of doc.clusters) delete c.cluster['certificate-authority-data'];
    const handle = loadKubeconfigClusters({ yaml: stringify(doc) }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const client = createClusterClient(handle);
    try {
      const result = await readObjects(client, [refOf('Deployment', 'shop', 'web')]);
      expect(result.clusterError?.kind).toBe('UNREACHABLE');
      expect(result.missing).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('watches over HTTPS', async () => {
    const handle = loadKubeconfigClusters({ yaml: tlsEmulator.kubeconfig() }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    const client = createClusterClient(handle);
    const cache = createWatchCache(client, { group: '', kind: 'ConfigMap' }, 'shop');
    const names: string[] = [];
    cache.on('change', (c) => names.push(c.ref.name));
    try {
      expect(await cache.start()).toBeUndefined();
      tlsEmulator.apply(makeObject('ConfigMap', 'shop', 'later'));
      await waitFor(() => names.includes('later'), 'a watch event over TLS');
    } finally {
      cache.stop();
      client.close();
    }
  });
});
