/**
 * The in-cluster install as an operator runs it: `kubectl kustomize deploy/kubernetes` rendered,
 * applied with `kubectl apply` to an emulated cluster over HTTPS, then phaselog started the way a
 * pod starts it (KUBERNETES_SERVICE_HOST/PORT, a mounted service-account token and CA, the
 * rendered phaselog.yaml, no kubeconfig anywhere) reads the cluster with that token and records
 * its own install as a phase. The emulator runs with RBAC, so the token minted by `kubectl create
 * token` can do what the base's ClusterRole grants and nothing else. In a pod without a usable token it stops, never shows the demo.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

const run = promisify(execFile);
const ADMIN_TOKEN = 'cluster-admin-token';

let em: Emulator;
let db: TestDatabase;
let dir: string;
let rendered: Record<string, unknown>[];
let adminKubeconfig: string;
/** The ServiceAccount's token, minted by `kubectl create token` once the base is applied. */
let saToken: string;
const running: PhaselogProcess[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-in-cluster-'));
  const { stdout } = await run('kubectl', ['kustomize', path.join(PROJECT_ROOT, 'deploy/kubernetes')], {
    timeout: 30_000,
  });
  rendered = parseAllDocuments(stdout).map((d) => d.toJSON() as Record<string, unknown>);
  writeFileSync(path.join(dir, 'rendered.yaml'), stdout);
  // RBAC on: the ServiceAccount's token can do exactly what the base's ClusterRole grants.
  em = await startEmulator({ port: 0, tls: true, token: ADMIN_TOKEN, rbac: true, completeRollouts: true });
  adminKubeconfig = path.join(dir, 'admin.kubeconfig');
  await em.writeKubeconfig(adminKubeconfig);
  db = await createTestDatabase('in_cluster');
}, 60_000);

afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await em?.close();
  await db?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** A pod's service-account mount: token, CA bundle and namespace, as the kubelet writes them. */
function serviceAccountDir(token: string | undefined): string {
  const sa = mkdtempSync(path.join(dir, 'serviceaccount-'));
  const kubeconfig = parseYaml(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, string> }> };
  const caData = kubeconfig.clusters[0]?.cluster['certificate-authority-data'] ?? '';
  writeFileSync(path.join(sa, 'ca.crt'), Buffer.from(caData, 'base64'));
  writeFileSync(path.join(sa, 'namespace'), 'phaselog');
  if (token !== undefined) writeFileSync(path.join(sa, 'token'), token);
  return sa;
}

/** The environment of a pod: no KUBECONFIG, no ~/.kube/config, the service host and port set. */
function podEnv(extra: Record<string, string>): Record<string, string> {
  const home = mkdtempSync(path.join(dir, 'home-'));
  mkdirSync(path.join(home, '.kube'));
  return cleanEnv({
    HOME: home,
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: new URL(em.url).port,
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    PHASELOG_REDIS_PREFIX: uniquePrefix('in-cluster'),
    PHASELOG_PORT: '0',
    PHASELOG_STATE_DIR: mkdtempSync(path.join(dir, 'state-')),
    ...extra,
  });
}

function kubectl(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run('kubectl', ['--kubeconfig', adminKubeconfig, ...args], { timeout: 60_000 });
}

async function graphql(url: string, query: string): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
}

describe('the kustomize base, applied to a cluster and read by an in-cluster phaselog', () => {
  it('renders and applies with kubectl', async () => {
    const { stdout } = await kubectl(['apply', '-f', path.join(dir, 'rendered.yaml')]);
    expect(stdout).toContain('deployment.apps/phaselog-worker created');
    expect(stdout).toContain('clusterrole.rbac.authorization.k8s.io/phaselog-read created');
    expect(
      em.get({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'phaselog', name: 'phaselog-api' }),
    ).toBeDefined();
    expect(em.get({ apiVersion: 'v1', kind: 'ServiceAccount', namespace: 'phaselog', name: 'phaselog' })).toBeDefined();
    saToken = (await kubectl(['-n', 'phaselog', 'create', 'token', 'phaselog'])).stdout.trim();
    expect(saToken).not.toBe('');
  }, 90_000);

  it('the ServiceAccount may get, list and watch, and write nothing', async () => {
    const can = async (...args: string[]): Promise<string> => {
      try {
        return (await kubectl(['--token', saToken, 'auth', 'can-i', ...args])).stdout.trim();
      } catch (error) {
        return String((error as { stdout?: string }).stdout ?? '').trim();
      }
    };
    expect(await can('list', 'deployments.apps', '--all-namespaces')).toBe('yes');
    expect(await can('watch', 'configmaps', '-n', 'shop')).toBe('yes');
    expect(await can('get', 'namespaces')).toBe('yes');
    expect(await can('create', 'configmaps', '-n', 'phaselog')).toBe('no');
    expect(await can('patch', 'deployments.apps', '-n', 'phaselog')).toBe('no');
    expect(await can('delete', 'pods', '-n', 'phaselog')).toBe('no');
    expect(await can('get', 'secrets', '-n', 'phaselog')).toBe('no');
    const write = kubectl([
      '--token',
      saToken,
      '-n',
      'phaselog',
      'create',
      'configmap',
      'planted',
      '--from-literal=a=b',
    ]);
    await expect(write).rejects.toMatchObject({
      stderr: expect.stringContaining(
        'forbidden: User "system:serviceaccount:phaselog:phaselog" cannot create resource "configmaps"',
      ),
    });
    expect(em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'phaselog', name: 'planted' })).toBeUndefined();
  }, 90_000);

  it('phaselog in the pod reads the cluster with the service-account token and records its own install', async () => {
    const configMap = rendered.find((o) => o.kind === 'ConfigMap') as { data: Record<string, string> };
    const configFile = path.join(dir, 'phaselog.yaml');
    writeFileSync(configFile, configMap.data['phaselog.yaml'] ?? '');
    em.resetRequests();
    const proc = runPhaselog(
      ['start'],
      podEnv({ PHASELOG_CONFIG: configFile, PHASELOG_SERVICE_ACCOUNT_DIR: serviceAccountDir(saToken) }),
    );
    running.push(proc);
    const inCluster = await proc.waitForLog(
      (l) => l.msg === 'reading the cluster phaselog runs in, with its service account',
      60_000,
    );
    expect(inCluster.cluster).toBe('in-cluster');
    expect(inCluster.server).toBe(em.url);
    const listening = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000);
    const url = String(listening.graphql);
    type Found = {
      status: string | null;
      resources: { edges: Array<{ node: { kind: string; name: string; status: string } }> };
    };
    let phase: Found | undefined;
    await waitFor(
      async () => {
        const answer = await graphql(
          url,
          '{ phase(cluster: "in-cluster", namespace: "phaselog", name: "phaselog") { status resources(first: 10) { edges { node { kind name status } } } } }',
        );
        phase = (answer.data?.phase ?? undefined) as Found | undefined;
        return phase?.status === 'Current';
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the phaselog phase to be recorded as Current' },
    );
    const names = (phase as Found).resources.edges.map((e) => `${e.node.kind}/${e.node.name}`).sort();
    expect(names).toEqual(['Deployment/phaselog-api', 'Deployment/phaselog-worker', 'Service/phaselog-api']);
    // Every request carried the service account's token (401 otherwise), the base's ClusterRole
    // granted all phaselog needed (403 otherwise), and none wrote.
    const requests = em.requests();
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((r) => r.status === 401 || r.status === 403)).toEqual([]);
    expect(requests.filter((r) => !['get', 'list', 'watch', 'discovery'].includes(r.verb))).toEqual([]);
    expect(proc.stdout()).not.toContain('DEMO MODE');
    expect(proc.stdout()).not.toContain(saToken);
  }, 120_000);

  it('in a pod whose service-account token is not mounted, phaselog stops naming the file, never starts the demo', async () => {
    const sa = serviceAccountDir(undefined);
    const proc = runPhaselog(['start'], podEnv({ PHASELOG_SERVICE_ACCOUNT_DIR: sa }));
    running.push(proc);
    expect(await exitCodeWithin(proc, 60_000)).toBe(1);
    expect(proc.stderr()).toContain(path.join(sa, 'token'));
    expect(proc.stderr()).toContain('KUBERNETES_SERVICE_HOST');
    expect(proc.stdout()).not.toContain('DEMO MODE');
  }, 90_000);
});
