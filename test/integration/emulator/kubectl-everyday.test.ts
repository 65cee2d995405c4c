/**
 * Everyday kubectl (v1.32 here and in CI) against an emulator as a user starts it: a generated
 * kubeconfig, Deployment rollouts completed by the emulator, kubectl's protobuf request bodies.
 * Without kubectl on PATH this file fails with a message saying how to get it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { kubectlWith, requireKubectl, waitFor } from './helpers.ts';

let em: Emulator;
let dir: string;
let kubeconfig: string;
const { kubectl, kubectlFails } = kubectlWith(() => kubeconfig);

beforeAll(async () => {
  await requireKubectl();
  em = await startEmulator({ completeRollouts: true });
  dir = await mkdtemp(join(tmpdir(), 'phaselog-kubectl-everyday-'));
  kubeconfig = join(dir, 'kubeconfig');
  await em.writeKubeconfig(kubeconfig);
  await kubectl('create', 'namespace', 'daily');
});

afterAll(async () => {
  await em?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const WIDGET_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;

const API_DEPLOYMENT = (image: string): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: daily}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "${image}"}]
`;

describe('kubectl create (protobuf request bodies)', () => {
  it('creates a ConfigMap whose data reads back', async () => {
    expect(
      await kubectl(
        'create',
        'configmap',
        'settings',
        '-n',
        'daily',
        '--from-literal=mode=fast',
        '--from-literal=size=10',
      ),
    ).toBe('configmap/settings created\n');
    expect(JSON.parse(await kubectl('get', 'configmap', 'settings', '-n', 'daily', '-o', 'jsonpath={.data}'))).toEqual({
      mode: 'fast',
      size: '10',
    });
  });

  it('creates a Deployment with replicas, labels and ports as given', async () => {
    expect(
      await kubectl('create', 'deployment', 'web', '-n', 'daily', '--image=nginx:1.25', '--replicas=2', '--port=8080'),
    ).toBe('deployment.apps/web created\n');
    const dep = JSON.parse(await kubectl('get', 'deployment', 'web', '-n', 'daily', '-o', 'json')) as {
      metadata: { labels: Record<string, string> };
      spec: {
        replicas: number;
        selector: unknown;
        template: { spec: { containers: { name: string; image: string; ports: unknown[] }[] } };
      };
    };
    expect(dep.metadata.labels).toEqual({ app: 'web' });
    expect(dep.spec.replicas).toBe(2);
    expect(dep.spec.selector).toEqual({ matchLabels: { app: 'web' } });
    expect(dep.spec.template.spec.containers).toEqual([
      { name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 8080 }] },
    ]);
  });

  it.each([
    [['secret', 'generic', 'creds', '--from-literal=user=admin'], 'secret/creds created'],
    [
      [
        'secret',
        'docker-registry',
        'pull',
        '--docker-server=r.example.com',
        '--docker-username=u',
        '--docker-password=p',
      ],
      'secret/pull created',
    ],
    [['serviceaccount', 'robot'], 'serviceaccount/robot created'],
    [['service', 'clusterip', 'web', '--tcp=80:8080'], 'service/web created'],
    [['service', 'nodeport', 'web-np', '--tcp=80:8080', '--node-port=30080'], 'service/web-np created'],
    [['service', 'loadbalancer', 'web-lb', '--tcp=443:8443'], 'service/web-lb created'],
    [['service', 'externalname', 'ext', '--external-name=db.example.com'], 'service/ext created'],
    [['job', 'once', '--image=busybox', '--', 'echo', 'hi'], 'job.batch/once created'],
    [['cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '--', 'date'], 'cronjob.batch/nightly created'],
    [['job', 'nightly-now', '--from=cronjob/nightly'], 'job.batch/nightly-now created'],
    [
      ['role', 'reader', '--verb=get,list', '--resource=pods,deployments.apps'],
      'role.rbac.authorization.k8s.io/reader created',
    ],
    [
      ['rolebinding', 'reader', '--role=reader', '--serviceaccount=daily:robot'],
      'rolebinding.rbac.authorization.k8s.io/reader created',
    ],
    [
      ['clusterrole', 'metrics', '--verb=get', '--non-resource-url=/metrics'],
      'clusterrole.rbac.authorization.k8s.io/metrics created',
    ],
    [
      ['clusterrolebinding', 'metrics', '--clusterrole=metrics', '--group=ops'],
      'clusterrolebinding.rbac.authorization.k8s.io/metrics created',
    ],
    [['priorityclass', 'low', '--value=0', '--description=batch work'], 'priorityclass.scheduling.k8s.io/low created'],
    [['quota', 'small', '--hard=pods=4,cpu=2'], 'resourcequota/small created'],
    [
      ['poddisruptionbudget', 'web', '--selector=app=web', '--min-available=1'],
      'poddisruptionbudget.policy/web created',
    ],
    [['ingress', 'web', '--class=nginx', '--rule=shop.example.com/=web:80'], 'ingress.networking.k8s.io/web created'],
  ])('kubectl create %j', async (args, printed) => {
    expect(await kubectl('create', '-n', 'daily', ...args)).toBe(`${printed}\n`);
  });

  it('keeps what the create subcommands encode (values, zero values of pointer fields, int-or-string)', async () => {
    expect(await kubectl('get', 'secret', 'creds', '-n', 'daily', '-o', 'jsonpath={.data.user}')).toBe(
      Buffer.from('admin').toString('base64'),
    );
    expect(
      await kubectl(
        'get',
        'service',
        'web-np',
        '-n',
        'daily',
        '-o',
        'jsonpath={.spec.type} {.spec.ports[0].port} {.spec.ports[0].targetPort} {.spec.ports[0].nodePort}',
      ),
    ).toBe('NodePort 80 8080 30080');
    expect(await kubectl('get', 'priorityclass', 'low', '-o', 'jsonpath={.value}|{.description}')).toBe('0|batch work');
    expect(
      await kubectl(
        'get',
        'cronjob',
        'nightly',
        '-n',
        'daily',
        '-o',
        'jsonpath={.spec.schedule}|{.spec.jobTemplate.spec.template.spec.containers[0].command}',
      ),
    ).toBe('0 3 * * *|["date"]');
    expect(await kubectl('get', 'pdb', 'web', '-n', 'daily', '-o', 'jsonpath={.spec.minAvailable}')).toBe('1');
    expect(await kubectl('get', 'role', 'reader', '-n', 'daily', '-o', 'jsonpath={.rules[*].apiGroups}')).toBe(
      '[""] ["apps"]',
    );
    expect(
      await kubectl(
        'get',
        'ingress',
        'web',
        '-n',
        'daily',
        '-o',
        'jsonpath={.spec.rules[0].http.paths[0].backend.service.port.number}',
      ),
    ).toBe('80');
  });

  it('issues a service-account token, and refuses one for a missing account', async () => {
    expect(await kubectl('create', 'token', 'robot', '-n', 'daily', '--duration=10m')).toMatch(/^\S{20,}\n?$/);
    expect((await kubectlFails('create', 'token', 'ghost', '-n', 'daily')).stderr).toContain(
      'serviceaccounts "ghost" not found',
    );
  });
});

describe('protobuf bodies the emulator cannot read', () => {
  const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer => {
    const str = (field: number, s: string | Buffer): Buffer => {
      const b = Buffer.isBuffer(s) ? s : Buffer.from(s);
      return Buffer.concat([Buffer.from([(field << 3) | 2, b.length]), b]);
    };
    return Buffer.concat([
      Buffer.from('k8s\0', 'latin1'),
      str(1, Buffer.concat([str(1, apiVersion), str(2, kind)])),
      str(2, raw),
    ]);
  };
  const post = (path: string, body: Buffer): Promise<Response> =>
    fetch(em.url + path, { method: 'POST', headers: { 'Content-Type': 'application/vnd.kubernetes.protobuf' }, body });

  it('answers 415 naming the field when a field outside its tables carries data, and stores nothing', async () => {
    // ConfigMap{metadata{name: "odd"}, field 99 = 1}
    const raw = Buffer.concat([
      Buffer.from([0x0a, 0x05, 0x0a, 0x03]),
      Buffer.from('odd'),
      Buffer.from([0x98, 0x06, 0x01]),
    ]);
    const res = await post('/api/v1/namespaces/daily/configmaps', envelope('v1', 'ConfigMap', raw));
    expect(res.status).toBe(415);
    expect(((await res.json()) as { message: string }).message).toContain('field 99 of ConfigMap');
    expect(em.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'daily', name: 'odd' })).toBeUndefined();
  });

  it('answers 415 for a body without the envelope, a truncated body and a custom resource', async () => {
    expect((await post('/api/v1/namespaces/daily/configmaps', Buffer.from('{"kind":"ConfigMap"}'))).status).toBe(415);
    expect(
      (await post('/api/v1/namespaces/daily/configmaps', envelope('v1', 'ConfigMap', Buffer.from([0x0a, 0x7f, 0x0a]))))
        .status,
    ).toBe(415);
    const cr = await post(
      '/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/daily/kustomizations',
      envelope('kustomize.toolkit.fluxcd.io/v1', 'Kustomization', Buffer.alloc(0)),
    );
    expect(cr.status).toBe(415);
    expect(((await cr.json()) as { message: string }).message).toContain(
      'accepted media types include: application/json',
    );
  });
});

describe('everyday kubectl', () => {
  it('creates from a file, waits for a CRD to be established, and serves its kind', async () => {
    const file = join(dir, 'widget-crd.yaml');
    await writeFile(file, WIDGET_CRD);
    expect(await kubectl('create', '-f', file)).toBe(
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n',
    );
    expect(
      await kubectl('wait', '--for', 'condition=established', 'crd/widgets.example.com', '--timeout=20s'),
    ).toContain('condition met');
    expect(
      await kubectl('wait', '--for=condition=NamesAccepted', 'crd/resourcegroups.kpt.dev', '--timeout=20s'),
    ).toContain('condition met');
    expect(
      await kubectl(
        'get',
        'crd',
        'widgets.example.com',
        '-o',
        'jsonpath={.status.acceptedNames.kind}/{.status.acceptedNames.listKind}/{.status.storedVersions}',
      ),
    ).toBe('Widget/WidgetList/["v1"]');
    await writeFile(
      join(dir, 'widget.yaml'),
      'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gear, namespace: daily}\nspec: {teeth: 12}\n',
    );
    expect(await kubectl('create', '-f', join(dir, 'widget.yaml'))).toBe('widget.example.com/gear created\n');
    expect(await kubectl('get', 'wd', '-n', 'daily', '-o', 'name')).toBe('widget.example.com/gear\n');
  });

  it('applies a manifest, then applies a change to it', async () => {
    const file = join(dir, 'api.yaml');
    await writeFile(file, API_DEPLOYMENT('api:1'));
    expect(await kubectl('apply', '-f', file)).toBe('deployment.apps/api created\n');
    await writeFile(file, API_DEPLOYMENT('api:2'));
    expect(await kubectl('apply', '-f', file)).toBe('deployment.apps/api configured\n');
    expect(await kubectl('apply', '-f', file)).toBe('deployment.apps/api unchanged\n');
    expect(
      await kubectl(
        'get',
        'deployment',
        'api',
        '-n',
        'daily',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}/{.metadata.generation}',
      ),
    ).toBe('api:2/2');
  });

  it('applies server-side', async () => {
    const file = join(dir, 'api.yaml');
    await writeFile(file, API_DEPLOYMENT('api:3'));
    expect(await kubectl('apply', '--server-side', '-f', file)).toBe('deployment.apps/api serverside-applied\n');
    expect(
      await kubectl(
        'get',
        'deployment',
        'api',
        '-n',
        'daily',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ),
    ).toBe('api:3');
  });

  it('follows a rollout to completion with rollout status', async () => {
    expect(await kubectl('rollout', 'status', 'deployment/web', '-n', 'daily', '--timeout=20s')).toContain(
      'deployment "web" successfully rolled out',
    );
    expect(await kubectl('rollout', 'status', 'deployment/api', '-n', 'daily', '--timeout=20s')).toContain(
      'deployment "api" successfully rolled out',
    );
  });

  it.each([
    ['statefulset', 'StatefulSet', 'roll out complete: 2 new pods have been updated'],
    ['daemonset', 'DaemonSet', 'daemon set "agent" successfully rolled out'],
  ])('follows a %s rollout to completion', async (resource, kind, message) => {
    const file = join(dir, `${resource}.yaml`);
    const replicas = kind === 'StatefulSet' ? '\n  replicas: 2\n  serviceName: agent' : '';
    await writeFile(
      file,
      `apiVersion: apps/v1\nkind: ${kind}\nmetadata: {name: agent, namespace: daily}\nspec:${replicas}\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec: {containers: [{name: agent, image: agent:1}]}\n`,
    );
    await kubectl('apply', '-f', file);
    const out = await kubectl('rollout', 'status', `${resource}/agent`, '-n', 'daily', '--timeout=20s');
    expect(out).toContain(message);
  });

  it('patches with strategic merge, merge and JSON patches', async () => {
    await kubectl(
      'patch',
      'deployment',
      'web',
      '-n',
      'daily',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}',
    );
    await kubectl('patch', 'configmap', 'settings', '-n', 'daily', '--type=merge', '-p', '{"data":{"mode":"slow"}}');
    await kubectl(
      'patch',
      'configmap',
      'settings',
      '-n',
      'daily',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/data/size"}]',
    );
    const dep = JSON.parse(await kubectl('get', 'deployment', 'web', '-n', 'daily', '-o', 'json')) as {
      spec: { template: { spec: { containers: { image: string; ports: unknown[] }[] } } };
    };
    // The strategic merge keeps the container's ports: containers merge by name.
    expect(dep.spec.template.spec.containers).toEqual([
      { name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] },
    ]);
    expect(JSON.parse(await kubectl('get', 'configmap', 'settings', '-n', 'daily', '-o', 'jsonpath={.data}'))).toEqual({
      mode: 'slow',
    });
    expect(await kubectl('rollout', 'status', 'deployment/web', '-n', 'daily', '--timeout=20s')).toContain(
      'successfully rolled out',
    );
  });

  it('labels and annotates, refusing to overwrite without --overwrite', async () => {
    expect(await kubectl('label', 'deployment', 'web', '-n', 'daily', 'tier=front')).toBe(
      'deployment.apps/web labeled\n',
    );
    expect((await kubectlFails('label', 'deployment', 'web', '-n', 'daily', 'tier=back')).stderr).toContain(
      "'tier' already has a value (front)",
    );
    expect(await kubectl('annotate', 'deployment', 'web', '-n', 'daily', 'owner=team-a')).toBe(
      'deployment.apps/web annotated\n',
    );
    expect(
      await kubectl(
        'get',
        'deployments',
        '-n',
        'daily',
        '-l',
        'tier=front',
        '-o',
        'jsonpath={.items[*].metadata.annotations.owner}',
      ),
    ).toBe('team-a');
  });

  it('scales, and the rollout completes at the new size', async () => {
    expect(await kubectl('scale', 'deployment', 'web', '-n', 'daily', '--replicas=4')).toBe(
      'deployment.apps/web scaled\n',
    );
    expect(await kubectl('rollout', 'status', 'deployment/web', '-n', 'daily', '--timeout=20s')).toContain(
      'successfully rolled out',
    );
    expect(
      await kubectl(
        'get',
        'deployment',
        'web',
        '-n',
        'daily',
        '-o',
        'jsonpath={.status.readyReplicas}/{.spec.replicas}',
      ),
    ).toBe('4/4');
  });

  it('describes a Deployment', async () => {
    const out = await kubectl('describe', 'deployment', 'web', '-n', 'daily');
    expect(out).toMatch(/^Name:\s+web$/m);
    expect(out).toMatch(/^Labels:\s+app=web$/m);
    expect(out).toMatch(/^StrategyType:\s+RollingUpdate$/m);
    expect(out).toMatch(/^Replicas:\s+4 desired \| 4 updated \| 4 total \| 4 available \| 0 unavailable$/m);
    expect(out).toMatch(/Image:\s+nginx:1\.27/);
  });

  it('answers auth can-i and auth whoami (the emulator has no RBAC: everything is allowed)', async () => {
    expect(await kubectl('auth', 'can-i', 'delete', 'deployments', '-n', 'daily')).toBe('yes\n');
    expect(await kubectl('auth', 'can-i', 'get', '/metrics')).toBe('yes\n');
    expect(await kubectl('auth', 'whoami')).toMatch(/^Username\s+emulator-user$/m);
    const get = await fetch(`${em.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`);
    expect(get.status).toBe(405);
  });

  it('explains a kind from its top-level schema, and says a field-level schema is missing', async () => {
    const out = await kubectl('explain', 'deployment');
    expect(out).toMatch(/^KIND:\s+Deployment$/m);
    expect(out).toMatch(/^\s+spec\s+<Object>$/m);
    expect((await kubectlFails('explain', 'deployment.spec.replicas')).stderr).toContain(
      'field "replicas" does not exist',
    );
  });

  it('watches with get -w and prints a change', async () => {
    const watcher = spawn('kubectl', [
      '--kubeconfig',
      kubeconfig,
      'get',
      'configmaps',
      '-n',
      'daily',
      '-w',
      '-o',
      'custom-columns=NAME:.metadata.name,MODE:.data.mode',
      '--no-headers',
    ]);
    let output = '';
    watcher.stdout.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => watcher.on('exit', () => resolve()));
    try {
      await waitFor('the first row', () => (/^settings\s+slow$/m.test(output) ? true : undefined), 20_000);
      await kubectl('patch', 'configmap', 'settings', '-n', 'daily', '--type=merge', '-p', '{"data":{"mode":"turbo"}}');
      await waitFor('the changed row', () => (/^settings\s+turbo$/m.test(output) ? true : undefined), 20_000);
    } finally {
      watcher.kill();
      await exited;
    }
  });

  it('deletes, and wait --for=delete returns once the object is gone', async () => {
    await kubectl(
      'patch',
      'configmap',
      'settings',
      '-n',
      'daily',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    );
    expect(await kubectl('delete', 'configmap', 'settings', '-n', 'daily', '--wait=false')).toBe(
      'configmap "settings" deleted\n',
    );
    const watchesBefore = em.requestCount({ verb: 'watch', resource: 'configmaps', namespace: 'daily' });
    const waiting = kubectl('wait', '--for=delete', 'configmap/settings', '-n', 'daily', '--timeout=20s');
    await waitFor(
      'kubectl wait to watch',
      () =>
        em.requestCount({ verb: 'watch', resource: 'configmaps', namespace: 'daily' }) > watchesBefore
          ? true
          : undefined,
      20_000,
    );
    await kubectl(
      'patch',
      'configmap',
      'settings',
      '-n',
      'daily',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    );
    expect(await waiting).toContain('condition met');
    expect(await kubectl('delete', 'deployment', 'web', '-n', 'daily')).toBe('deployment.apps "web" deleted\n');
    expect((await kubectlFails('get', 'deployment', 'web', '-n', 'daily')).stderr).toContain(
      'deployments.apps "web" not found',
    );
  });
});

describe('content negotiation', () => {
  it.each([
    ['protobuf or JSON (what kubectl sends)', 'application/vnd.kubernetes.protobuf,application/json', 200],
    ['a Table as JSON', 'application/json;as=Table;v=v1;g=meta.k8s.io', 200],
    ['anything', '*/*', 200],
    ['protobuf only', 'application/vnd.kubernetes.protobuf', 406],
    ['a protobuf watch stream only', 'application/vnd.kubernetes.protobuf;stream=watch', 406],
    ['YAML only', 'application/yaml', 406],
  ])('answers a client accepting %s (%s) with %i', async (_label, accept, code) => {
    const res = await fetch(`${em.url}/api/v1/namespaces/daily/configmaps`, { headers: { Accept: accept } });
    expect(res.status).toBe(code);
    expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
    const body = (await res.json()) as { kind: string; reason?: string };
    if (code === 406) expect(body).toMatchObject({ kind: 'Status', reason: 'NotAcceptable' });
    else expect(body.kind).not.toBe('Status');
  });
});
