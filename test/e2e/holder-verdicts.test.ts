/**
 * The inventory holder's verdict end to end: phaselog against the emulator, with a Flux
 * Kustomization, an Argo CD Application, a kpt ResourceGroup, a cli-utils inventory and an owner
 * phase whose members all stay Current while their holders change what they say. Each holder's
 * failure reaches the phase's status and message within one snapshot, the change log, the
 * `phaseStatusChanged` subscription, `status -w`, the gate (exit 1) and the audit report; its
 * recovery makes the phase Current again; sync state stays a condition a gate can require.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPhaselog, type RunningPhaselog } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import {
  argoApplication,
  cliUtilsInventory,
  fluxKustomization,
  lcmPhase,
  namespaceObject,
  ownedJob,
  ownerPhaseCrds,
  readyDeployment,
  ref,
  resourceGroup,
} from '../../src/demo/objects.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import type { KubeObject } from '../../src/kube/slim.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { wsClient } from '../integration/graphql/helpers.ts';
import { cleanEnv, exitCodeWithin, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTestDatabase, testRedisUrl, uniquePrefix, type TestDatabase } from '../helpers/services.ts';

let em: Emulator;
let database: TestDatabase;
let phaselog: RunningPhaselog;
let url: string;
let receiver: WebhookReceiver;
const running: PhaselogProcess[] = [];
const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-holders-'));
const startedAt = new Date();

interface PhaseView {
  status: string;
  message: string;
  conditions: { type: string; source: string; status: string; reason: string; message: string }[];
}

async function graphql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: T; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

async function phase(namespace: string, name: string): Promise<PhaseView> {
  const data = await graphql<{ phase: PhaseView | null }>(
    `
      query ($ns: String!, $name: String!) {
        phase(cluster: "test", namespace: $ns, name: $name) {
          status
          message
          conditions {
            type
            source
            status
            reason
            message
          }
        }
      }
    `,
    { ns: namespace, name },
  );
  if (data.phase === null) throw new Error(`no phase ${namespace}/${name} yet`);
  return data.phase;
}

const condition = (p: PhaseView, type: string) => p.conditions.find((c) => c.type === type);

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => ok().catch(() => false), { timeoutMs, intervalMs: 100, what });
}

async function cli(args: string[]): Promise<{ code: number | string; stdout: string; stderr: string }> {
  const proc = runPhaselog(args, cleanEnv({ PHASELOG_URL: url }));
  const code = await exitCodeWithin(proc, 60_000);
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

const web = ref('Deployment', 'shop', 'web');
const api = ref('Deployment', 'shop', 'api');

function kustomization(ready: { status: string; reason: string; message: string }, suspend = false): KubeObject {
  const base = fluxKustomization('apps', [web], 'main@sha1:1111');
  const status = base.status as Record<string, unknown>;
  return {
    ...base,
    spec: { ...(base.spec as object), suspend },
    status: { ...status, conditions: [{ type: 'Ready', ...ready }] },
  };
}

function application(health: string, sync: string, message = ''): KubeObject {
  const base = argoApplication('shop', 'shop', [api]);
  return {
    ...base,
    status: {
      ...(base.status as object),
      health: { status: health, message },
      sync: { status: sync, revision: 'a1b2c3d' },
    },
  };
}

function stalledGroup(stalled: boolean): KubeObject {
  const base = resourceGroup('shop', 'rg', [web]);
  return {
    ...base,
    status: {
      observedGeneration: 1,
      conditions: [
        { type: 'Reconciling', status: 'False', reason: 'FinishReconciling', message: 'finish reconciling' },
        stalled
          ? { type: 'Stalled', status: 'True', reason: 'ComponentFailed', message: 'apps/Deployment/shop/web failed' }
          : { type: 'Stalled', status: 'False', reason: 'FinishReconciling', message: '' },
      ],
    },
  };
}

function inventory(actuation: string): KubeObject {
  const base = cliUtilsInventory('shop', 'release', [api]);
  const data = Object.fromEntries(
    Object.keys(base.data as object).map((k) => [
      k,
      JSON.stringify({ strategy: 'Apply', actuation, reconcile: 'Succeeded' }),
    ]),
  );
  return { ...base, data };
}

const owner = lcmPhase('lcm', 'install', 'owner-uid-1');

beforeAll(async () => {
  receiver = await startWebhookReceiver('holder-verdicts-hmac-key');
  writeFileSync(path.join(dir, 'hmac'), 'holder-verdicts-hmac-key');
  em = await startEmulator({ port: 0 });
  em.apply([
    ...ownerPhaseCrds(),
    namespaceObject('shop'),
    namespaceObject('flux-system'),
    namespaceObject('argocd'),
    namespaceObject('lcm'),
    readyDeployment('shop', 'web'),
    readyDeployment('shop', 'api'),
    kustomization({ status: 'True', reason: 'ReconciliationSucceeded', message: 'Applied revision: main@sha1:1111' }),
    application('Healthy', 'Synced'),
    stalledGroup(false),
    inventory('Succeeded'),
    owner,
  ]);
  writeFileSync(
    path.join(dir, 'phaselog.yaml'),
    [
      'clusters:',
      '  - name: test',
      `    server: ${em.url}`,
      'phases:',
      '  owners:',
      '    - kind: lcm.example.dev/Phase',
      '      ownedKinds: [batch/Job]',
      'notifications:',
      '  scanInterval: 200ms',
      '  routes:',
      '    - name: flux-ready',
      '      match: { changes: [condition], conditionTypes: [flux/Ready] }',
      '      minDuration: 4s',
      `      receiver: { type: webhook, url: "${receiver.url}", secretFile: hmac }`,
      '',
    ].join('\n'),
  );
  database = await createTestDatabase('holder_verdicts');
  const config = loadConfig(
    {
      DATABASE_URL: database.url,
      REDIS_URL: testRedisUrl(),
      PHASELOG_PORT: '0',
      PHASELOG_STATE_DIR: path.join(dir, 'state'),
      PHASELOG_SNAPSHOT_INTERVAL: '2s',
      PHASELOG_REDIS_PREFIX: uniquePrefix('holders'),
    },
    dir,
  );
  phaselog = await startPhaselog(config, pino({ level: 'silent' }));
  url = `${phaselog.url}/graphql`;
  await until(
    'the holders recorded with their phases Current',
    async () =>
      (await phase('flux-system', 'apps')).status === 'Current' &&
      (await phase('argocd', 'shop')).status === 'Current' &&
      (await phase('shop', 'rg')).status === 'Current' &&
      (await phase('shop', 'release')).status === 'Current' &&
      condition(await phase('flux-system', 'apps'), 'flux/Ready')?.status === 'True',
    60_000,
  );
}, 120_000);

afterAll(async () => {
  for (const proc of running) proc.child.kill('SIGKILL');
  await phaselog?.close();
  await em?.close();
  await receiver?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("a Flux Kustomization's verdict", () => {
  it('fails the phase on Ready=False/BuildFailed with members Current: message, conditions, -w, subscription, gate, report; Ready=True makes it Current', async () => {
    const watch = runPhaselog(
      ['status', '--watch', '-o', 'json', '--cluster', 'test'],
      cleanEnv({ PHASELOG_URL: url }),
    );
    running.push(watch);
    await waitFor(() => watch.stdout().includes('"kind":"Phase"'), {
      timeoutMs: 15_000,
      intervalMs: 50,
      what: 'the list',
    });
    const client = wsClient(url.replace(/^http/, 'ws'));
    const events: { toStatus: string | null; phase: { name: string } | null }[] = [];
    const unsubscribe = client.subscribe<{ phaseStatusChanged: (typeof events)[number] }>(
      { query: 'subscription { phaseStatusChanged { toStatus phase { name } } }' },
      { next: (v) => v.data && events.push(v.data.phaseStatusChanged), error: () => {}, complete: () => {} },
    );
    // Subscribed before the change: give the socket a moment to be registered.
    await new Promise((resolve) => setTimeout(resolve, 500));

    em.apply(
      kustomization({ status: 'False', reason: 'BuildFailed', message: 'kustomize build failed: missing resource' }),
    );
    await until('the phase Failed', async () => (await phase('flux-system', 'apps')).status === 'Failed');
    const failed = await phase('flux-system', 'apps');
    expect(failed.message).toBe(
      'Kustomization flux-system/apps: BuildFailed: kustomize build failed: missing resource (resources: All 1 resources are Current)',
    );
    await until(
      'flux/Ready False',
      async () => condition(await phase('flux-system', 'apps'), 'flux/Ready')?.status === 'False',
    );
    expect(condition(await phase('flux-system', 'apps'), 'flux/Ready')).toMatchObject({
      source: 'flux',
      reason: 'BuildFailed',
      message: 'kustomize build failed: missing resource',
    });

    const gate = await cli(['gate', 'test/flux-system/apps', '--for', '30s']);
    expect(gate.code).toBe(1);
    expect(gate.stdout + gate.stderr).toContain('Failed');

    await waitFor(() => events.some((e) => e.phase?.name === 'apps' && e.toStatus === 'Failed'), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the subscription event',
    });
    await waitFor(() => watch.stdout().includes('"toStatus":"Failed"'), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: 'the -w line',
    });

    em.apply(
      kustomization({ status: 'True', reason: 'ReconciliationSucceeded', message: 'Applied revision: main@sha1:2222' }),
    );
    await until('the phase Current again', async () => (await phase('flux-system', 'apps')).status === 'Current');
    expect((await cli(['gate', 'test/flux-system/apps', '--for', '1s', '--wait', '--timeout', '30s'])).code).toBe(0);

    const report = await graphql<{ auditReport: { phases: { name: string; failures: number }[] } }>(
      'query($from: DateTime!) { auditReport(from: $from, filter: { clusters: ["test"] }) { phases { name failures } } }',
      { from: startedAt.toISOString() },
    );
    expect(report.auditReport.phases.find((p) => p.name === 'apps')?.failures).toBe(1);

    unsubscribe();
    await client.dispose();
    watch.child.kill('SIGINT');
    expect(await exitCodeWithin(watch, 10_000)).toBe(0);
  }, 90_000);

  it('suspended with members Current: Current, Suspended=True, and a gate asking Suspended=False blocks', async () => {
    em.apply(kustomization({ status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' }, true));
    await until(
      'flux/Suspended True',
      async () => condition(await phase('flux-system', 'apps'), 'flux/Suspended')?.status === 'True',
    );
    expect((await phase('flux-system', 'apps')).status).toBe('Current');
    // The status holds; the condition does not, whatever the wait.
    const gate = await cli([
      'gate',
      'test/flux-system/apps',
      '--for',
      '1s',
      '--condition',
      'Suspended=False',
      '--wait',
      '--timeout',
      '4s',
    ]);
    expect(gate.code).toBe(1);
    expect(gate.stdout + gate.stderr).toContain('condition flux/Suspended is True, not False');
    em.apply(kustomization({ status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' }));
    await until(
      'flux/Suspended False',
      async () => condition(await phase('flux-system', 'apps'), 'flux/Suspended')?.status === 'False',
    );
  }, 60_000);

  it('a malformed status makes only its own phase Unknown, with a clear condition', async () => {
    const broken = kustomization({ status: 'True', reason: 'ok', message: 'ok' });
    em.apply({ ...broken, status: { ...(broken.status as object), conditions: 'Ready' } });
    await until('the phase Unknown', async () => (await phase('flux-system', 'apps')).status === 'Unknown');
    const unknown = await phase('flux-system', 'apps');
    expect(unknown.message).toContain(
      'Kustomization flux-system/apps: cannot read its status: status.conditions is a string, not a list',
    );
    await until(
      'flux/Ready MalformedStatus',
      async () => condition(await phase('flux-system', 'apps'), 'flux/Ready')?.reason === 'MalformedStatus',
    );
    expect((await phase('argocd', 'shop')).status).toBe('Current');
    expect((await phase('shop', 'release')).status).toBe('Current');
    em.apply(kustomization({ status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' }));
    await until('the phase Current again', async () => (await phase('flux-system', 'apps')).status === 'Current');
  }, 60_000);
});

describe("an Argo CD Application's verdict", () => {
  it('Degraded fails the phase; OutOfSync is a condition only, which a gate can require; Synced again passes', async () => {
    em.apply(application('Degraded', 'Synced', 'Deployment shop/api exceeded its progress deadline'));
    await until('the phase Failed', async () => (await phase('argocd', 'shop')).status === 'Failed');
    expect((await phase('argocd', 'shop')).message).toMatch(
      /^Application argocd\/shop is Degraded: Deployment shop\/api exceeded its progress deadline \(resources: /,
    );
    em.apply(application('Healthy', 'OutOfSync'));
    await until(
      'argocd/Synced False',
      async () => condition(await phase('argocd', 'shop'), 'argocd/Synced')?.status === 'False',
    );
    expect((await phase('argocd', 'shop')).status).toBe('Current');
    const blocked = await cli([
      'gate',
      'test/argocd/shop',
      '--for',
      '1s',
      '--condition',
      'Synced=True',
      '--wait',
      '--timeout',
      '4s',
    ]);
    expect(blocked.code).toBe(1);
    expect(blocked.stdout + blocked.stderr).toContain('condition argocd/Synced is False, not True (OutOfSync');
    em.apply(application('Healthy', 'Synced'));
    await until(
      'argocd/Synced True',
      async () => condition(await phase('argocd', 'shop'), 'argocd/Synced')?.status === 'True',
    );
    expect(
      (
        await cli([
          'gate',
          'test/argocd/shop',
          '--for',
          '1s',
          '--condition',
          'Synced=True',
          '--wait',
          '--timeout',
          '20s',
        ])
      ).code,
    ).toBe(0);
  }, 60_000);
});

describe('kpt and cli-utils verdicts', () => {
  it('a Stalled ResourceGroup and a cli-utils inventory whose actuation Failed fail their phases, and recover', async () => {
    em.apply([stalledGroup(true), inventory('Failed')]);
    await until(
      'both Failed',
      async () =>
        (await phase('shop', 'rg')).status === 'Failed' && (await phase('shop', 'release')).status === 'Failed',
    );
    expect((await phase('shop', 'rg')).message).toMatch(/^ResourceGroup shop\/rg: Stalled: ComponentFailed/);
    expect((await phase('shop', 'release')).message).toMatch(
      /^ConfigMap shop\/inventory-release: 1 of 1 objects failed to apply, first Deployment shop\/api/,
    );
    await until(
      'kpt/Applied False',
      async () => condition(await phase('shop', 'release'), 'kpt/Applied')?.status === 'False',
    );
    em.apply([stalledGroup(false), inventory('Succeeded')]);
    await until(
      'both Current',
      async () =>
        (await phase('shop', 'rg')).status === 'Current' && (await phase('shop', 'release')).status === 'Current',
    );
  }, 60_000);
});

describe("an owner phase's verdict", () => {
  it('is InProgress before its first task and Current once the task completes', async () => {
    await until('the owner phase recorded', async () => (await phase('lcm', 'install')).status === 'InProgress');
    expect((await phase('lcm', 'install')).message).toMatch(/^Phase lcm\/install has started no task yet/);
    const gate = await cli(['gate', 'test/lcm/install', '--for', '1s']);
    expect(gate.code).toBe(1);
    expect(gate.stdout + gate.stderr).toContain('InProgress');
    em.apply(ownedJob(owner, 'install-1', 'job-uid-1', 'complete'));
    await until('the owner phase Current', async () => (await phase('lcm', 'install')).status === 'Current');
    await until(
      'owner/Started True',
      async () => condition(await phase('lcm', 'install'), 'owner/Started')?.status === 'True',
    );
  }, 60_000);
});

describe('flapping and unreachable holders', () => {
  const fluxReady = async () => {
    const data = await graphql<{
      statusChanges: { edges: { node: { conditionType: string | null; toStatus: string | null } }[] };
    }>('{ statusChanges(filter: { scopes: [condition] }, first: 100) { edges { node { conditionType toStatus } } } }');
    return data.statusChanges.edges
      .map((e) => e.node)
      .filter((n) => n.conditionType === 'flux/Ready')
      .map((n) => n.toStatus);
  };
  const delivered = () =>
    receiver.hits.filter((h) => JSON.stringify(h.body).includes('flux/Ready')).map((h) => JSON.stringify(h.body));

  it('records every transition of a flapping Ready once, in order, and a minDuration route sends only the one that held', async () => {
    const before = await fluxReady();
    const deliveredBefore = delivered().length;
    const okay = { status: 'True', reason: 'ReconciliationSucceeded', message: 'ok' };
    const failed = { status: 'False', reason: 'HealthCheckFailed', message: 'timeout waiting for Deployment shop/web' };
    // A blip: False for about a second, then True again.
    em.apply(kustomization(failed));
    await until('False recorded', async () => (await fluxReady()).length === before.length + 1);
    em.apply(kustomization(okay));
    await until('True recorded', async () => (await fluxReady()).length === before.length + 2);
    // Then a failure that lasts.
    em.apply(kustomization(failed));
    await until('False recorded again', async () => (await fluxReady()).length === before.length + 3);
    expect((await fluxReady()).slice(before.length)).toEqual(['False', 'True', 'False']);
    await waitFor(() => delivered().length > deliveredBefore, {
      timeoutMs: 20_000,
      intervalMs: 100,
      what: 'the held False sent',
    });
    // Past the hold of the last change: still exactly one delivery, the lasting False.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const sent = delivered().slice(deliveredBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('"toStatus":"False"');
    em.apply(kustomization(okay));
    await until('the phase Current again', async () => (await phase('flux-system', 'apps')).status === 'Current');
  }, 60_000);

  it("an unreachable cluster's holder verdict goes stale with everything there, and gates refuse", async () => {
    const undo = em.injectFault({ effect: 'reset' });
    em.closeWatches();
    try {
      // Three snapshot intervals (2s each) without a run: the holder's conditions are stale.
      await until(
        'flux/Synced stale',
        async () => {
          const data = await graphql<{ phase: { conditions: { type: string; stale: boolean }[] } }>(
            '{ phase(cluster: "test", namespace: "argocd", name: "shop") { conditions { type stale } } }',
          );
          return data.phase.conditions.find((c) => c.type === 'argocd/Synced')?.stale === true;
        },
        30_000,
      );
      const gate = await cli(['gate', 'test/argocd/shop', '--for', '1s', '--condition', 'Synced=True']);
      expect(gate.code).toBe(1);
      expect(gate.stdout + gate.stderr).toMatch(/UNREACHABLE|unreachable|stale/);
    } finally {
      undo();
    }
    await until(
      'the gate passes again once observed',
      async () => {
        const gate = await cli(['gate', 'test/argocd/shop', '--for', '1s', '--condition', 'Synced=True']);
        return gate.code === 0;
      },
      60_000,
    );
  }, 120_000);
});
