import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorInputError, startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { startHarness, waitFor } from './helpers.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'phaselog-emulator-setup-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadFile', () => {
  it('loads multi-document YAML, a JSON List and a JSON array', async () => {
    const { em } = await startHarness();
    try {
      const yamlFile = join(dir, 'objects.yaml');
      await writeFile(
        yamlFile,
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: team}\n---\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: team}\n',
      );
      const listFile = join(dir, 'list.json');
      await writeFile(
        listFile,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'List',
          items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'team' } }],
        }),
      );
      const arrayFile = join(dir, 'array.json');
      await writeFile(
        arrayFile,
        JSON.stringify([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'team' } }]),
      );
      expect(await em.loadFile(yamlFile)).toBe(2);
      expect(await em.loadFile(listFile)).toBe(1);
      expect(await em.loadFile(arrayFile)).toBe(1);
      for (const name of ['a', 'b', 'c'])
        expect(em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team', name })).toBeDefined();
    } finally {
      await em.close();
    }
  });

  it('keeps the generation of a fixture so observedGeneration stays consistent', async () => {
    const { em } = await startHarness();
    try {
      const file = join(dir, 'kustomization.json');
      await writeFile(
        file,
        JSON.stringify({
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'shop', namespace: 'flux-system', generation: 3 },
          spec: {
            interval: '10m',
            path: './apps/shop',
            prune: true,
            sourceRef: { kind: 'GitRepository', name: 'flux-system' },
          },
          status: {
            observedGeneration: 3,
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'ReconciliationSucceeded',
                message: 'Applied revision: main@sha1:0123abcd',
              },
            ],
          },
        }),
      );
      expect(await em.loadFile(file)).toBe(1);
      const ks = em.get({
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        namespace: 'flux-system',
        name: 'shop',
      });
      expect(ks?.metadata?.['generation']).toBe(3);
    } finally {
      await em.close();
    }
  });

  it.each([
    ['missing file', null, /cannot read/],
    ['broken YAML', 'a: [1, 2\n', /invalid YAML/],
    ['object without kind', '{"apiVersion":"v1"}', /no apiVersion\/kind/],
    ['unknown kind', 'apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n', /does not serve Gadget/],
  ])('rejects a %s with a clear error', async (_what, content, message) => {
    const { em } = await startHarness();
    try {
      const file = join(dir, `bad-${Math.random().toString(36).slice(2)}.yaml`);
      if (content !== null) await writeFile(file, content);
      await expect(em.loadFile(file)).rejects.toThrow(message);
    } finally {
      await em.close();
    }
  });
});

describe('in-process input errors', () => {
  it.each([
    [
      'an unknown kind',
      (em: Emulator) => em.apply({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } }),
      /does not serve Gadget/,
    ],
    [
      'a missing name',
      (em: Emulator) => em.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }),
      /without metadata.name/,
    ],
    ['a non-object', (em: Emulator) => em.apply(null as unknown as object), /takes Kubernetes objects/],
    [
      'patching a missing object',
      (em: Emulator) => em.patchStatus({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'nope' }, {}),
      /does not exist/,
    ],
    [
      'a bad label selector',
      (em: Emulator) => em.list({ apiVersion: 'v1', kind: 'ConfigMap', labelSelector: 'a in (b' }),
      /invalid label selector/,
    ],
    [
      'an invalid CRD',
      (em: Emulator) =>
        em.apply({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'x.example.com' },
          spec: {},
        }),
      /spec.group/,
    ],
  ])('throws EmulatorInputError for %s', async (_what, act, message) => {
    const { em } = await startHarness();
    try {
      let thrown: unknown;
      try {
        act(em);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(EmulatorInputError);
      expect((thrown as Error).message).toMatch(message);
    } finally {
      await em.close();
    }
  });
});

describe('TLS', () => {
  it('serves HTTPS with a self-signed certificate that its kubeconfig trusts', async () => {
    const em = await startEmulator({ tls: true, token: 't0k3n', clusterName: 'secure' });
    try {
      expect(em.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const kc = new KubeConfig();
      kc.loadFromString(em.kubeconfig({ contextName: 'secure-ctx' }));
      expect(kc.getCurrentContext()).toBe('secure-ctx');
      expect(kc.getCurrentCluster()?.skipTLSVerify).toBeFalsy();
      const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
      expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
    } finally {
      await em.close();
    }
  });
});

describe('standalone mode', () => {
  it('writes a kubeconfig, serves the loaded objects and exits 0 on SIGINT', async () => {
    const manifest = join(dir, 'standalone.yaml');
    await writeFile(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello, namespace: default}\n');
    const kubeconfig = join(dir, 'standalone.kubeconfig');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/emulator/main.ts', '--port', '0', '--kubeconfig', kubeconfig, '--load', manifest],
      { cwd: process.cwd() },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitFor('the server to listen', () => (out.includes('listening on') ? true : undefined), 20_000);
    expect(out).toContain('loaded 1 objects');
    const kc = new KubeConfig();
    kc.loadFromString(await readFile(kubeconfig, 'utf8'));
    const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ name: 'hello', namespace: 'default' });
    expect(cm.metadata?.name).toBe('hello');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out).toContain('emulator stopped');
  });

  it('exits 2 with usage on a bad flag', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/emulator/main.ts', '--port', 'abc'], {
      cwd: process.cwd(),
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(2);
    expect(err).toContain('--port must be an integer');
  });
});
