/**
 * deploy/kubernetes as `kubectl kustomize` renders it: what an operator installs must be read-only
 * towards the cluster, run non-root on a read-only root filesystem, probe the right ports, and keep
 * secrets in a Secret. Each rule is also run against a tampered copy, so a rule that cannot fail
 * would show here.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ENV_KEYS, loadConfig } from '../../../src/config.ts';
import { declaredPhasesOf } from '../../../src/declared-phases.ts';
import { PROJECT_ROOT } from '../../../src/runtime/paths.ts';

/** Variables of the Node.js runtime (not phaselog's) a shipped manifest may set. */
const RUNTIME_KEYS = ['NODE_OPTIONS', 'MALLOC_ARENA_MAX'];

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking arbitrary manifests

/** `kubectl kustomize`, as an operator renders the base; kubectl is required, never skipped. */
function renderBase(): string {
  try {
    return execFileSync('kubectl', ['kustomize', path.join(PROJECT_ROOT, 'deploy/kubernetes')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
  } catch (error) {
    throw new Error(
      `kubectl kustomize deploy/kubernetes failed (${(error as Error).message}); install kubectl >= 1.30 and put it on PATH (.ci/run installs one where it is missing)`,
    );
  }
}

const rendered = renderBase();
const objects: Obj[] = parseAllDocuments(rendered).map((d) => d.toJSON() as Obj);
const clone = (): Obj[] => structuredClone(objects);
const byKind = (list: Obj[], kind: string): Obj[] => list.filter((o) => o.kind === kind);
const deployment = (list: Obj[], name: string): Obj => {
  const found = list.find((o) => o.kind === 'Deployment' && o.metadata.name === name);
  if (found === undefined) throw new Error(`no Deployment ${name}`);
  return found;
};
const READ_VERBS = new Set(['get', 'list', 'watch']);

/** RBAC rules that grant anything but get/list/watch, or grant access to Secrets. */
function rbacViolations(list: Obj[]): string[] {
  const out: string[] = [];
  for (const role of [...byKind(list, 'ClusterRole'), ...byKind(list, 'Role')]) {
    for (const rule of role.rules ?? []) {
      for (const verb of rule.verbs ?? []) if (!READ_VERBS.has(verb)) out.push(`${role.metadata.name}: verb ${verb}`);
      if ((rule.apiGroups ?? []).includes('*'))
        out.push(`${role.metadata.name}: every API group (core Secrets included)`);
      if (
        (rule.apiGroups ?? []).includes('') &&
        (rule.resources ?? []).some((r: string) => r === '*' || r === 'secrets')
      )
        out.push(`${role.metadata.name}: Secrets`);
    }
  }
  return out;
}

/** Pods that may run as root, write their root filesystem or escalate. */
function podViolations(list: Obj[]): string[] {
  const out: string[] = [];
  for (const d of byKind(list, 'Deployment')) {
    const pod = d.spec.template.spec;
    if (pod.securityContext?.runAsNonRoot !== true) out.push(`${d.metadata.name}: runAsNonRoot`);
    for (const c of pod.containers) {
      if (c.securityContext?.readOnlyRootFilesystem !== true)
        out.push(`${d.metadata.name}/${c.name}: readOnlyRootFilesystem`);
      if (c.securityContext?.allowPrivilegeEscalation !== false)
        out.push(`${d.metadata.name}/${c.name}: allowPrivilegeEscalation`);
      if (!(c.securityContext?.capabilities?.drop ?? []).includes('ALL'))
        out.push(`${d.metadata.name}/${c.name}: capabilities`);
      if (c.resources?.requests === undefined || c.resources?.limits?.memory === undefined)
        out.push(`${d.metadata.name}/${c.name}: resources`);
    }
  }
  return out;
}

/** Secret values written into the manifests instead of referenced. */
function secretViolations(list: Obj[]): string[] {
  const out: string[] = [];
  for (const s of byKind(list, 'Secret')) out.push(`Secret ${s.metadata.name} is inlined`);
  for (const d of byKind(list, 'Deployment')) {
    for (const c of d.spec.template.spec.containers) {
      for (const e of c.env ?? []) {
        if (
          [
            'DATABASE_URL',
            'PHASELOG_DATABASE_READ_URL',
            'REDIS_URL',
            'PHASELOG_METRICS_TOKEN',
            'PHASELOG_TOKEN',
          ].includes(e.name) &&
          e.valueFrom?.secretKeyRef === undefined
        )
          out.push(`${d.metadata.name}: ${e.name} is not from a Secret`);
      }
    }
  }
  return out;
}

function env(d: Obj): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of d.spec.template.spec.containers[0].env ?? []) if (typeof e.value === 'string') out[e.name] = e.value;
  return out;
}

/** The container port a probe reaches, by name or number. */
function probePort(d: Obj, probe: 'livenessProbe' | 'readinessProbe'): { path: string; port: number } {
  const c = d.spec.template.spec.containers[0];
  const p = c[probe].httpGet;
  const port = typeof p.port === 'number' ? p.port : c.ports.find((x: Obj) => x.name === p.port)?.containerPort;
  return { path: p.path, port };
}

describe('deploy/kubernetes (kustomize base)', () => {
  it('renders the objects of an install', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      expect.arrayContaining([
        'ClusterRole/phaselog-read',
        'ClusterRoleBinding/phaselog-read',
        'Deployment/phaselog-api',
        'Deployment/phaselog-worker',
        'Namespace/phaselog',
        'Service/phaselog-api',
        'ServiceAccount/phaselog',
      ]),
    );
    expect(byKind(objects, 'ConfigMap')).toHaveLength(1);
  });

  it('grants get, list and watch only, and no Secrets', () => {
    expect(rbacViolations(objects)).toEqual([]);
    const tampered = clone();
    byKind(tampered, 'ClusterRole')[0]?.rules[0].verbs.push('patch');
    tampered.push({
      kind: 'Role',
      metadata: { name: 'sneaky' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }],
    });
    expect(rbacViolations(tampered)).toEqual(['phaselog-read: verb patch', 'sneaky: Secrets']);
  });

  it("binds the read-only role to the worker's ServiceAccount only; the API pod gets no token", () => {
    const binding = byKind(objects, 'ClusterRoleBinding')[0] as Obj;
    expect(binding.roleRef.name).toBe('phaselog-read');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'phaselog', namespace: 'phaselog' }]);
    expect(deployment(objects, 'phaselog-worker').spec.template.spec.serviceAccountName).toBe('phaselog');
    expect(deployment(objects, 'phaselog-api').spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('runs non-root on a read-only root filesystem, with the state directory on an emptyDir', () => {
    expect(podViolations(objects)).toEqual([]);
    const tampered = clone();
    deployment(tampered, 'phaselog-worker').spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem =
      false;
    delete deployment(tampered, 'phaselog-api').spec.template.spec.securityContext.runAsNonRoot;
    expect(podViolations(tampered)).toEqual([
      'phaselog-api: runAsNonRoot',
      'phaselog-worker/worker: readOnlyRootFilesystem',
    ]);
    for (const name of ['phaselog-api', 'phaselog-worker']) {
      const d = deployment(objects, name);
      const stateDir = env(d).PHASELOG_STATE_DIR;
      const mount = d.spec.template.spec.containers[0].volumeMounts.find((m: Obj) => m.mountPath === stateDir);
      expect(d.spec.template.spec.volumes.find((v: Obj) => v.name === mount?.name)?.emptyDir).toEqual({});
    }
  });

  it('references DATABASE_URL and REDIS_URL from a Secret, never inlines them', () => {
    expect(secretViolations(objects)).toEqual([]);
    const tampered = clone();
    deployment(tampered, 'phaselog-api').spec.template.spec.containers[0].env.push({
      name: 'DATABASE_URL',
      value: 'postgresql://u:pw@db/x',
    });
    tampered.push({ kind: 'Secret', metadata: { name: 'phaselog' }, stringData: { REDIS_URL: 'redis://r' } });
    expect(secretViolations(tampered)).toEqual([
      'Secret phaselog is inlined',
      'phaselog-api: DATABASE_URL is not from a Secret',
    ]);
  });

  it('runs two API replicas and two workers, spread over nodes, each drained one at a time', () => {
    for (const [name, component] of [
      ['phaselog-api', 'api'],
      ['phaselog-worker', 'worker'],
    ] as const) {
      const d = deployment(objects, name);
      expect(d.spec.replicas).toBe(2);
      const spread = d.spec.template.spec.topologySpreadConstraints;
      expect(spread).toEqual([
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: d.spec.selector.matchLabels },
        },
      ]);
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
      const budgets = byKind(objects, 'PodDisruptionBudget').filter(
        (b) => b.spec.selector.matchLabels['app.kubernetes.io/component'] === component,
      );
      expect(
        budgets.map((b) => ({ maxUnavailable: b.spec.maxUnavailable, selector: b.spec.selector.matchLabels })),
      ).toEqual([{ maxUnavailable: 1, selector: d.spec.selector.matchLabels }]);
    }
  });

  it('names each worker by its pod name (unique among replicas), which worker.id accepts', () => {
    const worker = deployment(objects, 'phaselog-worker').spec.template.spec.containers[0];
    expect(worker.env.find((e: Obj) => e.name === 'PHASELOG_WORKER_ID')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'metadata.name' },
    });
    // A Deployment's pod name: the ReplicaSet's name and a random suffix.
    expect(
      loadConfig(
        { PHASELOG_WORKER_ID: 'phaselog-worker-7d9c5b6f4-x2x9q' },
        mkdtempSync(path.join(tmpdir(), 'phaselog-manifests-')),
      ).worker.id,
    ).toBe('phaselog-worker-7d9c5b6f4-x2x9q');
    const api = deployment(objects, 'phaselog-api').spec.template.spec.containers[0];
    expect(api.env.find((e: Obj) => e.name === 'PHASELOG_WORKER_ID')).toBeUndefined();
  });

  it('gives the API a read replica URL from an optional Secret key, and the workers none', () => {
    const api = deployment(objects, 'phaselog-api').spec.template.spec.containers[0];
    expect(api.env.find((e: Obj) => e.name === 'PHASELOG_DATABASE_READ_URL')?.valueFrom).toEqual({
      secretKeyRef: { name: 'phaselog', key: 'PHASELOG_DATABASE_READ_URL', optional: true },
    });
    const worker = deployment(objects, 'phaselog-worker').spec.template.spec.containers[0];
    expect(worker.env.find((e: Obj) => e.name === 'PHASELOG_DATABASE_READ_URL')).toBeUndefined();
    const tampered = clone();
    deployment(tampered, 'phaselog-api').spec.template.spec.containers[0].env.find(
      (e: Obj) => e.name === 'PHASELOG_DATABASE_READ_URL',
    ).valueFrom = undefined;
    deployment(tampered, 'phaselog-api').spec.template.spec.containers[0].env.find(
      (e: Obj) => e.name === 'PHASELOG_DATABASE_READ_URL',
    ).value = 'postgresql://u:pw@replica/x';
    expect(secretViolations(tampered)).toEqual(['phaselog-api: PHASELOG_DATABASE_READ_URL is not from a Secret']);
  });

  it('probes /healthz and /readyz on the port each role listens on', () => {
    const api = deployment(objects, 'phaselog-api');
    const worker = deployment(objects, 'phaselog-worker');
    expect(probePort(api, 'livenessProbe')).toEqual({ path: '/healthz', port: Number(env(api).PHASELOG_PORT) });
    expect(probePort(api, 'readinessProbe')).toEqual({ path: '/readyz', port: Number(env(api).PHASELOG_PORT) });
    expect(probePort(worker, 'livenessProbe')).toEqual({
      path: '/healthz',
      port: Number(env(worker).PHASELOG_PROBE_PORT),
    });
    expect(probePort(worker, 'readinessProbe')).toEqual({
      path: '/readyz',
      port: Number(env(worker).PHASELOG_PROBE_PORT),
    });
    const service = byKind(objects, 'Service')[0] as Obj;
    expect(service.spec.selector).toEqual(api.spec.selector.matchLabels);
  });

  it('gives the worker a heap limit that leaves room below its memory limit for native memory', () => {
    const worker = deployment(objects, 'phaselog-worker');
    const container = worker.spec.template.spec.containers[0];
    const heapMb = Number(/--max-old-space-size=(\d+)/.exec(env(worker).NODE_OPTIONS ?? '')?.[1]);
    const limit = String(container.resources.limits.memory);
    const limitMb = Number(/^(\d+)Gi$/.exec(limit)?.[1] ?? NaN) * 1024 || Number(/^(\d+)Mi$/.exec(limit)?.[1]);
    expect(heapMb).toBeGreaterThan(0);
    // V8 may use the new space (tens of MB) beyond the old space limit, and the process ~150 MB of
    // native memory and code.
    expect(heapMb + 200).toBeLessThanOrEqual(limitMb);
    expect(env(worker).MALLOC_ARENA_MAX).toBe('2');
    // The API's heap is not limited by the shipped manifest.
    expect(env(deployment(objects, 'phaselog-api')).NODE_OPTIONS).toBeUndefined();
  });

  it.each(['phaselog-api', 'phaselog-worker'])(
    '%s runs its role with variables phaselog reads and a valid phaselog.yaml',
    (name) => {
      const d = deployment(objects, name);
      const c = d.spec.template.spec.containers[0];
      expect(c.args).toEqual([name.replace('phaselog-', '')]);
      // Besides phaselog's own variables, only the runtime's memory settings.
      for (const e of c.env) expect([...Object.keys(ENV_KEYS), ...RUNTIME_KEYS]).toContain(e.name);
      const configMap = byKind(objects, 'ConfigMap')[0] as Obj;
      const mount = c.volumeMounts.find((m: Obj) => env(d).PHASELOG_CONFIG?.startsWith(`${m.mountPath}/`));
      expect(d.spec.template.spec.volumes.find((v: Obj) => v.name === mount?.name)?.configMap?.name).toBe(
        configMap.metadata.name,
      );
      const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-manifests-'));
      writeFileSync(path.join(dir, 'phaselog.yaml'), configMap.data['phaselog.yaml']);
      const config = loadConfig(
        {
          ...env(d),
          PHASELOG_CONFIG: path.join(dir, 'phaselog.yaml'),
          DATABASE_URL: 'postgresql://u@db/x',
          REDIS_URL: 'redis://r:6379',
        },
        dir,
      );
      expect(config.server.host).toBe('0.0.0.0');
      expect(declaredPhasesOf(config.phases).map((p) => `${p.cluster}/${p.name}`)).toEqual(['in-cluster/phaselog']);
    },
  );
});
