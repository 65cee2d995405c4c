/**
 * The inventory holder's verdict (src/inventory/holder.ts), read through parseInventory from the
 * real-shaped inventories in test/fixtures/inventories with their status changed the way Flux,
 * Argo CD, kpt and the cli-utils applier change it.
 */
import { describe, expect, it } from 'vitest';
import { parseInventory, mergePhases } from '../../../src/inventory/parse-inventory.ts';
import { buildOwnerPhases } from '../../../src/inventory/owner-phase.ts';
import type { HolderReading } from '../../../src/inventory/holder.ts';
import { lcmPhase, ownedJob } from '../../../src/demo/objects.ts';
import { loadInventoryFixture } from './load-fixture.ts';

type Obj = Record<string, unknown>;

function holderOf(obj: Obj): HolderReading | undefined {
  const parsed = parseInventory(obj);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.phase.holder;
}

function condition(reading: HolderReading | undefined, type: string) {
  return reading?.conditions.find((c) => c.type === type);
}

/** The fixture with `status` fields replaced (conditions as given, in order). */
function withStatus(name: string, status: Obj, spec?: Obj): Obj {
  const obj = loadInventoryFixture(name);
  return {
    ...obj,
    ...(spec !== undefined ? { spec: { ...(obj.spec as Obj), ...spec } } : {}),
    status: { ...(obj.status as Obj), ...status },
  };
}

const ready = (status: string, reason = '', message = '') => ({ type: 'Ready', status, reason, message });

describe('a Flux Kustomization as holder', () => {
  it('says nothing worse than Current when Ready and the attempted revision is applied', () => {
    const reading = holderOf(loadInventoryFixture('flux-kustomization.json'));
    expect(reading?.source).toBe('flux');
    // A worker keeps every parse: holders that say the same share one frozen reading.
    expect(holderOf(loadInventoryFixture('flux-kustomization.json'))).toBe(reading);
    expect(Object.isFrozen(reading)).toBe(true);
    expect(reading?.verdict).toBeUndefined();
    expect(reading?.conditions.map((c) => [c.type, c.status])).toEqual([
      ['flux/Ready', 'True'],
      ['flux/Reconciling', 'False'],
      ['flux/Stalled', 'False'],
      ['flux/Suspended', 'False'],
      ['flux/Synced', 'True'],
    ]);
  });

  it('fails the phase on Ready=False BuildFailed, naming the Kustomization and keeping reason and message', () => {
    const reading = holderOf(
      withStatus('flux-kustomization.json', {
        conditions: [ready('False', 'BuildFailed', 'kustomize build failed: accumulating resources')],
        lastAttemptedRevision: 'main@sha1:ffff',
      }),
    );
    expect(reading?.verdict).toEqual({
      status: 'Failed',
      message: 'Kustomization flux-system/shop: BuildFailed: kustomize build failed: accumulating resources',
    });
    expect(condition(reading, 'flux/Ready')).toMatchObject({ status: 'False', reason: 'BuildFailed' });
    expect(condition(reading, 'flux/Synced')).toMatchObject({ status: 'False', reason: 'NewRevisionNotApplied' });
  });

  it('fails on Stalled=True and waits on Reconciling=True, a dependency, Ready Unknown or an unobserved generation', () => {
    const stalled = holderOf(
      withStatus('flux-kustomization.json', {
        conditions: [
          ready('False', 'InvalidCELExpression', 'bad'),
          { type: 'Stalled', status: 'True', reason: 'InvalidCELExpression', message: 'bad' },
        ],
      }),
    );
    expect(stalled?.verdict?.status).toBe('Failed');
    expect(stalled?.verdict?.message).toMatch(/^Kustomization flux-system\/shop: Stalled: InvalidCELExpression/);
    const reconciling = holderOf(
      withStatus('flux-kustomization.json', {
        conditions: [
          ready('False', 'BuildFailed', 'x'),
          { type: 'Reconciling', status: 'True', reason: 'ProgressingWithRetry', message: 'retrying' },
        ],
      }),
    );
    expect(reconciling?.verdict).toEqual({
      status: 'InProgress',
      message: 'Kustomization flux-system/shop is reconciling: ProgressingWithRetry: retrying',
    });
    const waiting = holderOf(
      withStatus('flux-kustomization.json', {
        conditions: [ready('False', 'DependencyNotReady', 'dependency infra not ready')],
      }),
    );
    expect(waiting?.verdict?.status).toBe('InProgress');
    const unknown = holderOf(
      withStatus('flux-kustomization.json', { conditions: [ready('Unknown', 'Progressing', 'applying')] }),
    );
    expect(unknown?.verdict?.status).toBe('InProgress');
    const obj = withStatus('flux-kustomization.json', { observedGeneration: 2 });
    const generation = holderOf({ ...obj, metadata: { ...(obj.metadata as Obj), generation: 3 } });
    expect(generation?.verdict).toEqual({
      status: 'InProgress',
      message: 'Kustomization flux-system/shop: generation 3 not observed yet (observed 2)',
    });
    expect(condition(generation, 'flux/Synced')?.reason).toBe('GenerationNotObserved');
  });

  it('is waited on while it attempts a newer revision, and has not reported Ready before its first reconcile', () => {
    const newer = holderOf(withStatus('flux-kustomization.json', { lastAttemptedRevision: 'main@sha1:0000' }));
    expect(newer?.verdict?.status).toBe('InProgress');
    expect(newer?.verdict?.message).toContain('revision main@sha1:0000 attempted');
    const fresh = holderOf({ ...loadInventoryFixture('flux-kustomization.json'), status: {} });
    expect(fresh?.verdict).toEqual({
      status: 'InProgress',
      message: 'Kustomization flux-system/shop has not reported Ready yet',
    });
    expect(condition(fresh, 'flux/Ready')).toMatchObject({ status: 'Unknown', reason: 'NotReported' });
  });

  it('suspended: Suspended=True, never waited on, but a failure still counts', () => {
    const suspended = holderOf(
      withStatus('flux-kustomization.json', { lastAttemptedRevision: 'main@sha1:0000' }, { suspend: true }),
    );
    expect(condition(suspended, 'flux/Suspended')?.status).toBe('True');
    expect(suspended?.verdict).toBeUndefined();
    const failed = holderOf(
      withStatus(
        'flux-kustomization.json',
        { conditions: [ready('False', 'HealthCheckFailed', 'timeout')] },
        { suspend: true },
      ),
    );
    expect(failed?.verdict?.status).toBe('Failed');
  });

  it('a malformed status gives Unknown with the reason in every condition, never a throw', () => {
    for (const [status, why] of [
      [{ conditions: 'Ready' }, 'status.conditions is a string, not a list'],
      [{ conditions: [7] }, 'status.conditions[0] is a number'],
      [{ conditions: [{ type: 'Ready', status: true }] }, 'status.conditions[0].status is a boolean, not a string'],
      [{ observedGeneration: 'three' }, 'status.observedGeneration is a string, not an integer'],
    ] as const) {
      const reading = holderOf(withStatus('flux-kustomization.json', status));
      expect(reading?.verdict).toEqual({
        status: 'Unknown',
        message: `Kustomization flux-system/shop: cannot read its status: ${why}`,
      });
      expect(reading?.conditions.every((c) => c.status === 'Unknown' && c.reason === 'MalformedStatus')).toBe(true);
    }
    const suspend = holderOf(withStatus('flux-kustomization.json', {}, { suspend: 'yes' }));
    expect(suspend?.verdict?.message).toContain('spec.suspend is a string, not a boolean');
  });
});

describe('a Flux HelmRelease as holder', () => {
  it('is Synced when its latest release is deployed from the chart it attempted', () => {
    const reading = holderOf(loadInventoryFixture('flux-helmrelease.json'));
    expect(reading?.verdict).toBeUndefined();
    expect(condition(reading, 'flux/Synced')).toMatchObject({ status: 'True', message: 'release podinfo.v3 deployed' });
  });

  it('fails when the latest release failed, and waits while a new chart version or a pending release is in flight', () => {
    const fixture = loadInventoryFixture('flux-helmrelease.json');
    const history = ((fixture.status as Obj).history as Obj[]).map((h) => ({ ...h }));
    const failed = holderOf(
      withStatus('flux-helmrelease.json', { history: [{ ...history[0], status: 'failed' }, ...history.slice(1)] }),
    );
    expect(failed?.verdict).toEqual({
      status: 'Failed',
      message: 'HelmRelease shop/podinfo: release podinfo.v3 failed',
    });
    const newer = holderOf(withStatus('flux-helmrelease.json', { lastAttemptedRevision: '6.8.0' }));
    expect(newer?.verdict?.status).toBe('InProgress');
    expect(condition(newer, 'flux/Synced')?.reason).toBe('NewRevisionNotApplied');
    const pending = holderOf(
      withStatus('flux-helmrelease.json', { history: [{ ...history[0], status: 'pending-upgrade' }] }),
    );
    expect(pending?.verdict?.status).toBe('InProgress');
  });
});

describe('an Argo CD Application as holder', () => {
  const app = (health: Obj | undefined, sync: Obj | undefined, operation?: Obj) => {
    const obj = loadInventoryFixture('argocd-application.json');
    const status = { ...(obj.status as Obj) };
    delete status.operationState;
    if (health === undefined) delete status.health;
    else status.health = health;
    if (sync === undefined) delete status.sync;
    else status.sync = sync;
    if (operation !== undefined) status.operationState = operation;
    return holderOf({ ...obj, status });
  };

  it('maps health to the phase: Degraded Failed, Progressing InProgress, Missing NotFound, Unknown Unknown, Healthy and Suspended nothing', () => {
    const synced = { status: 'Synced', revision: 'abc' };
    expect(app({ status: 'Healthy' }, synced)?.verdict).toBeUndefined();
    expect(app({ status: 'Suspended' }, synced)?.verdict).toBeUndefined();
    expect(
      app({ status: 'Degraded', message: 'Deployment shop/web exceeded its progress deadline' }, synced)?.verdict,
    ).toEqual({
      status: 'Failed',
      message: 'Application argocd/shop is Degraded: Deployment shop/web exceeded its progress deadline',
    });
    expect(app({ status: 'Progressing' }, synced)?.verdict?.status).toBe('InProgress');
    expect(app({ status: 'Missing' }, synced)?.verdict?.status).toBe('NotFound');
    expect(app({ status: 'Unknown' }, synced)?.verdict?.status).toBe('Unknown');
    expect(app(undefined, synced)?.verdict?.status).toBe('InProgress');
  });

  it('OutOfSync is a condition, not a status', () => {
    const reading = app({ status: 'Healthy' }, { status: 'OutOfSync', revision: 'abc' });
    expect(reading?.verdict).toBeUndefined();
    expect(condition(reading, 'argocd/Synced')).toEqual({
      type: 'argocd/Synced',
      status: 'False',
      reason: 'OutOfSync',
      message: 'revision abc',
    });
    expect(condition(reading, 'argocd/Healthy')?.status).toBe('True');
  });

  it('a failed sync fails the phase unless the app is Synced anyway; a running one is waited on', () => {
    const failed = app(
      { status: 'Healthy' },
      { status: 'OutOfSync' },
      { phase: 'Failed', message: 'one or more objects failed to apply' },
    );
    expect(failed?.verdict).toEqual({
      status: 'Failed',
      message: 'Application argocd/shop: sync Failed: one or more objects failed to apply',
    });
    expect(condition(failed, 'argocd/OperationSucceeded')).toMatchObject({ status: 'False', reason: 'Failed' });
    const recovered = app({ status: 'Healthy' }, { status: 'Synced' }, { phase: 'Error', message: 'x' });
    expect(recovered?.verdict).toBeUndefined();
    const running = app(
      { status: 'Healthy' },
      { status: 'OutOfSync' },
      { phase: 'Running', message: 'waiting for hooks' },
    );
    expect(running?.verdict?.status).toBe('InProgress');
  });

  it('a health that is a number is a clear Unknown, not a crash', () => {
    const obj = loadInventoryFixture('argocd-application.json');
    const reading = holderOf({ ...obj, status: { ...(obj.status as Obj), health: 3 } });
    expect(reading?.verdict).toEqual({
      status: 'Unknown',
      message: 'Application argocd/shop: cannot read its status: status.health is a number, not an object',
    });
    // Unknown values of known fields are kept as written, not refused.
    const odd = app({ status: 'Sleeping' }, { status: 'Drifting' });
    expect(condition(odd, 'argocd/Healthy')).toMatchObject({ status: 'False', reason: 'Sleeping' });
    expect(condition(odd, 'argocd/Synced')).toMatchObject({ status: 'Unknown', reason: 'Drifting' });
  });
});

describe('kpt and cli-utils appliers as holders', () => {
  it('a ResourceGroup that is Stalled fails its phase', () => {
    const reading = holderOf(loadInventoryFixture('kpt-resourcegroup.json'));
    expect(reading?.source).toBe('kpt');
    expect(reading?.verdict?.status).toBe('Failed');
    expect(reading?.verdict?.message).toMatch(
      /^ResourceGroup shop\/.*: Stalled: ComponentFailed: The following components failed:batch\/Job\/shop\/db-migrate$/,
    );
    expect(condition(reading, 'kpt/Stalled')?.status).toBe('True');
  });

  it('a ResourceGroup reconciling or with its generation unobserved is waited on', () => {
    const reconciling = holderOf(
      withStatus('kpt-resourcegroup.json', {
        conditions: [{ type: 'Reconciling', status: 'True', reason: 'Starting', message: 'start' }],
      }),
    );
    expect(reconciling?.verdict?.status).toBe('InProgress');
    const fixture = withStatus('kpt-resourcegroup.json', { conditions: [], observedGeneration: 1 });
    const generation = holderOf({ ...fixture, metadata: { ...(fixture.metadata as Obj), generation: 5 } });
    expect(generation?.verdict?.message).toContain('has not observed generation 5 yet (observed 1)');
  });

  it('a cli-utils inventory whose actuation says Failed fails its phase; Pending is waited on; Succeeded says nothing', () => {
    const fixture = loadInventoryFixture('cli-utils-configmap.json');
    // The fixture records one failed actuation (StatefulSet shop/orders); all applied first.
    const applied = Object.fromEntries(
      Object.entries(fixture.data as Record<string, string>).map(([k, v]) => [k, v.replace('"Failed"', '"Succeeded"')]),
    );
    const ok = holderOf({ ...fixture, data: applied });
    expect(ok?.verdict).toBeUndefined();
    expect(condition(ok, 'kpt/Applied')).toMatchObject({ status: 'True', reason: 'ActuationSucceeded' });
    const data = { ...applied };
    data['shop_frontend__Service'] = JSON.stringify({ strategy: 'Apply', actuation: 'Failed', reconcile: 'Skipped' });
    const failed = holderOf({ ...fixture, data });
    expect(failed?.verdict).toEqual({
      status: 'Failed',
      // 9 entries, 8 of which record actuation (the PodDisruptionBudget's value is "").
      message: 'ConfigMap shop/inventory-04873621: 1 of 8 objects failed to apply, first Service shop/frontend',
    });
    data['shop_frontend__Service'] = JSON.stringify({ strategy: 'Apply', actuation: 'Pending', reconcile: 'Pending' });
    expect(holderOf({ ...fixture, data })?.verdict?.status).toBe('InProgress');
    // An inventory that records no actuation (status recording off) has no applier verdict.
    const bare = Object.fromEntries(Object.keys(data).map((k) => [k, '']));
    expect(holderOf({ ...fixture, data: bare })).toBeUndefined();
  });

  it('ConfigMaps merged into one phase are judged over all their entries', () => {
    const fixture = loadInventoryFixture('cli-utils-configmap.json');
    const second = {
      ...fixture,
      metadata: { ...(fixture.metadata as Obj), name: 'inventory-2' },
      data: { shop_extra__ConfigMap: JSON.stringify({ strategy: 'Apply', actuation: 'Failed' }) },
    };
    const phases = [fixture, second].map((o) => {
      const parsed = parseInventory(o);
      if (!parsed.ok) throw new Error('unparsed');
      return parsed.phase;
    });
    const [merged] = mergePhases(phases);
    expect(merged?.holder?.verdict?.status).toBe('Failed');
    expect(merged?.holder?.verdict?.message).toContain('first ConfigMap shop/extra');
  });
});

describe('an owner phase as holder', () => {
  const spec = {
    kind: { group: 'lcm.example.dev', kind: 'Phase' },
    ownedKinds: [{ group: 'batch', kind: 'Job' }],
  };

  it('before its first task the phase is InProgress, and Started=False', () => {
    const owner = lcmPhase('lcm', 'install', 'uid-1');
    const [built] = buildOwnerPhases(spec, [owner], []);
    expect(built?.phase.holder?.verdict).toEqual({
      status: 'InProgress',
      message: 'Phase lcm/install has started no task yet',
    });
    expect(condition(built?.phase.holder, 'owner/Started')).toMatchObject({ status: 'False', reason: 'NoTaskYet' });
  });

  it('with a task and no readiness reported, its tasks speak; Ready=False fails it; a configured condition is read', () => {
    const owner = lcmPhase('lcm', 'install', 'uid-1');
    const job = ownedJob(owner, 'install-1', 'uid-2', 'running');
    const [started] = buildOwnerPhases(spec, [owner], [job]);
    expect(started?.phase.holder?.verdict).toBeUndefined();
    expect(condition(started?.phase.holder, 'owner/Started')?.status).toBe('True');
    const failing = { ...owner, status: { conditions: [ready('False', 'TaskFailed', 'job install-1 failed')] } };
    const [failed] = buildOwnerPhases(spec, [failing], [job]);
    expect(failed?.phase.holder?.verdict).toEqual({
      status: 'Failed',
      message: 'Phase lcm/install: TaskFailed: job install-1 failed',
    });
    const custom = {
      ...owner,
      status: { conditions: [{ type: 'Completed', status: 'False', reason: 'Running', message: '' }] },
    };
    const [waiting] = buildOwnerPhases({ ...spec, readyCondition: 'Completed' }, [custom], [job]);
    expect(waiting?.phase.holder?.verdict?.status).toBe('InProgress');
    expect(condition(waiting?.phase.holder, 'owner/Completed')?.status).toBe('False');
  });
});
