/**
 * kubectl (v1.32 on this machine and in CI) against the emulator through a kubeconfig file.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { deploymentRollout, runScenario } from '../../../src/emulator/scenario.ts';
import { kubectlWith, requireKubectl, waitFor } from './helpers.ts';

const run = promisify(execFile);

let em: Emulator;
let dir: string;
let kubeconfig: string;
const { kubectl, kubectlFails } = kubectlWith(() => kubeconfig);

beforeAll(async () => {
  await requireKubectl();
  em = await startEmulator();
  dir = await mkdtemp(join(tmpdir(), 'phaselog-kubectl-'));
  kubeconfig = join(dir, 'kubeconfig');
  await em.writeKubeconfig(kubeconfig);
});

afterAll(async () => {
  await em?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const MANIFEST = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: frontend
  namespace: shop
spec:
  replicas: 2
  selector:
    matchLabels: {app: frontend}
  template:
    metadata:
      labels: {app: frontend}
    spec:
      containers:
      - name: web
        image: nginx:IMAGE_TAG
      - name: sidecar
        image: busybox:1.36
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: shop
  namespace: shop
spec:
  interval: 5m
  path: ./shop
  prune: true
  sourceRef: {kind: GitRepository, name: infra}
`;

describe('kubectl against the emulator', () => {
  it('applies, re-applies and reads back objects (built-in and custom kinds)', async () => {
    const file = join(dir, 'shop.yaml');
    await writeFile(file, MANIFEST.replace('IMAGE_TAG', '1.25'));
    const created = await kubectl('apply', '-f', file);
    expect(created).toContain('deployment.apps/frontend created');
    expect(created).toContain('kustomization.kustomize.toolkit.fluxcd.io/shop created');

    await writeFile(file, MANIFEST.replace('IMAGE_TAG', '1.27'));
    const configured = await kubectl('apply', '-f', file);
    expect(configured).toContain('deployment.apps/frontend configured');
    expect(configured).toContain('kustomization.kustomize.toolkit.fluxcd.io/shop unchanged');

    const dep = JSON.parse(await kubectl('get', 'deployment', 'frontend', '-n', 'shop', '-o', 'json')) as {
      metadata: { generation: number };
      spec: { template: { spec: { containers: { name: string; image: string }[] } } };
    };
    expect(dep.metadata.generation).toBe(2);
    expect(dep.spec.template.spec.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      'web=nginx:1.27',
      'sidecar=busybox:1.36',
    ]);
    expect(await kubectl('get', 'ks', '-n', 'shop', '-o', 'name')).toBe(
      'kustomization.kustomize.toolkit.fluxcd.io/shop\n',
    );
  });

  it('diffs a changed manifest against the live object with a server-side dry run', async () => {
    const file = join(dir, 'shop-diff.yaml');
    await writeFile(file, MANIFEST.replace('IMAGE_TAG', '1.27'));
    expect(await kubectl('diff', '-f', file)).toBe('');
    await writeFile(file, MANIFEST.replace('IMAGE_TAG', '1.28'));
    const diff = await run('kubectl', ['--kubeconfig', kubeconfig, 'diff', '-f', file]).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code, stdout: e.stdout ?? '' }),
    );
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/^\+\s+- image: nginx:1\.28$/m);
    const live = await kubectl(
      'get',
      'deployment',
      'frontend',
      '-n',
      'shop',
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    );
    expect(live).toBe('nginx:1.27');
  });

  it('patches status through --subresource=status without touching generation', async () => {
    await kubectl(
      'patch',
      'deployment',
      'frontend',
      '-n',
      'shop',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"observedGeneration":2,"readyReplicas":2}}',
    );
    const out = await kubectl(
      'get',
      'deployment',
      'frontend',
      '-n',
      'shop',
      '-o',
      'jsonpath={.status.readyReplicas}/{.metadata.generation}',
    );
    expect(out).toBe('2/2');
  });

  it('prints server-side columns and scales through the /scale subresource', async () => {
    expect(await kubectl('scale', 'deployment', 'frontend', '-n', 'shop', '--replicas=4')).toContain(
      'deployment.apps/frontend scaled',
    );
    const table = await kubectl('get', 'deployment', 'frontend', '-n', 'shop');
    const [header, row] = table
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    expect(header).toEqual(['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE']);
    expect(row?.slice(0, 2)).toEqual(['frontend', '2/4']);
    await kubectl(
      'patch',
      'kustomization',
      'shop',
      '-n',
      'shop',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded","message":"Applied"}]}}',
    );
    const ks = (await kubectl('get', 'ks', '-n', 'shop'))
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    expect(ks[0]).toEqual(['NAME', 'AGE', 'READY', 'STATUS']);
    expect([ks[1]?.[0], ks[1]?.[2], ks[1]?.[3]]).toEqual(['shop', 'True', 'Applied']);
  });

  it('lists with a label selector and reports NotFound like a cluster', async () => {
    expect(await kubectl('get', 'deployments', '-A', '-l', 'app!=other', '-o', 'name')).toBe(
      'deployment.apps/frontend\n',
    );
    expect((await kubectlFails('get', 'deployment', 'nope', '-n', 'shop')).stderr).toContain(
      'deployments.apps "nope" not found',
    );
  });

  it('shows a finalized object as Terminating until the finalizer goes, and get --watch sees every step', async () => {
    await kubectl(
      'patch',
      'deployment',
      'frontend',
      '-n',
      'shop',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    );
    const watcher: ChildProcess = spawn('kubectl', [
      '--kubeconfig',
      kubeconfig,
      'get',
      'deployments',
      '-n',
      'shop',
      '--watch',
      '--output-watch-events',
      '-o',
      'custom-columns=EVENT:.type,NAME:.object.metadata.name,DELETING:.object.metadata.deletionTimestamp',
    ]);
    let output = '';
    watcher.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    try {
      await waitFor('the initial ADDED line', () => (output.includes('ADDED') ? true : undefined), 15_000);
      expect(await kubectl('delete', 'deployment', 'frontend', '-n', 'shop', '--wait=false')).toContain('deleted');
      const stamp = await kubectl(
        'get',
        'deployment',
        'frontend',
        '-n',
        'shop',
        '-o',
        'jsonpath={.metadata.deletionTimestamp}',
      );
      expect(stamp).toMatch(/^\d{4}-\d\d-\d\dT/);
      await kubectl(
        'patch',
        'deployment',
        'frontend',
        '-n',
        'shop',
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/finalizers"}]',
      );
      await waitFor('the DELETED line', () => (output.includes('DELETED') ? true : undefined), 15_000);
    } finally {
      watcher.kill();
    }
    const rows = output
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/));
    // Removing the last finalizer deletes at once: one DELETED event, no MODIFIED before it.
    expect(rows.map((r) => r[0])).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(rows[0]?.[2]).toBe('<none>');
    expect(rows[1]?.[2]).toMatch(/^\d{4}-/);
    expect((await kubectlFails('get', 'deployment', 'frontend', '-n', 'shop')).stderr).toContain('not found');
  });

  it('follows a scripted Deployment rollout with kubectl rollout status', async () => {
    let created = false;
    const scenario = runScenario(
      em,
      deploymentRollout({ name: 'api', namespace: 'rollout', replicas: 3, stepMs: 300 }),
      { onStep: () => (created = true) },
    );
    await waitFor('the Deployment to exist', () => (created ? true : undefined));
    const status = await kubectl('rollout', 'status', 'deployment/api', '-n', 'rollout', '--timeout=20s');
    expect(await scenario).toEqual({ status: 'completed', stepsRun: 4 });
    expect(status).toContain('deployment "api" successfully rolled out');
  });

  it('prints server-side table rows for every change under get --watch', async () => {
    em.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'watched' } });
    const watcher = spawn('kubectl', ['--kubeconfig', kubeconfig, 'get', 'deployments', '-n', 'watched', '--watch']);
    let output = '';
    watcher.stdout.on('data', (c: Buffer) => (output += c.toString()));
    watcher.stderr.on('data', (c: Buffer) => (output += c.toString()));
    try {
      await waitFor(
        'kubectl to start watching',
        () =>
          em.requestCount({ verb: 'watch', resource: 'deployments', namespace: 'watched' }) > 0 ? true : undefined,
        15_000,
      );
      await runScenario(em, deploymentRollout({ name: 'web', namespace: 'watched', replicas: 2, stepMs: 50 }));
      await waitFor('the 2/2 row', () => (/^web\s+2\/2\s/m.test(output) ? true : undefined), 15_000);
    } finally {
      watcher.kill();
    }
    const readyColumn = output
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('web'))
      .map((l) => l.split(/\s+/)[1]);
    expect(readyColumn.at(0)).toBe('0/2');
    expect(readyColumn).toContain('1/2');
    expect(readyColumn.at(-1)).toBe('2/2');
  });

  it('talks to a TLS emulator that requires a token, trusting the certificate from the kubeconfig', async () => {
    const secure = await startEmulator({ tls: true, token: 'kubectl-token' });
    const secureConfig = join(dir, 'secure.kubeconfig');
    try {
      await secure.writeKubeconfig(secureConfig);
      const { stdout } = await run('kubectl', ['--kubeconfig', secureConfig, 'get', 'namespaces', '-o', 'name'], {
        timeout: 20_000,
      });
      expect(stdout).toContain('namespace/default');
      expect(secure.requestCount({ status: 401 })).toBe(0);
    } finally {
      await secure.close();
    }
  });

  it('deletes a namespace with its contents', async () => {
    expect(await kubectl('delete', 'namespace', 'shop')).toContain('namespace "shop" deleted');
    expect(await kubectl('get', 'kustomizations', '-A', '-o', 'name')).toBe('');
  });
});
