import { describe, expect, it } from 'vitest';
import { hashDocument, hashStrings } from '../../../src/history/canonical-hash.ts';
import { digestOfHex } from '../../../src/history/fingerprints.ts';
import { hashObservation, planSnapshot } from '../../../src/history/plan-snapshot.ts';
import type {
  ClusterObservation,
  ObservedPhase,
  ObservedResource,
  StoredClusterState,
  StoredPhase,
} from '../../../src/history/types.ts';

const AT = new Date('2026-03-01T10:00:00Z');
const EARLIER = new Date('2026-03-01T09:59:30Z');
const IDENTITY = { sourceKind: 'cli-utils', namespace: 'shop', name: 'phase-a' };
const counts = (current: number, inProgress = 0) => ({
  Current: current,
  InProgress: inProgress,
  Failed: 0,
  Terminating: 0,
  NotFound: 0,
  Unknown: 0,
});

function resource(
  name: string,
  status: ObservedResource['status'] = 'Current',
  message = 'Deployment is available. Replicas: 2',
): ObservedResource {
  return {
    key: `apps/Deployment/shop/${name}`,
    status,
    message,
    conditions: [],
    presence: status === 'NotFound' ? 'NotPresent' : 'Present',
    generation: 1,
    observedGeneration: 1,
  };
}

function phase(
  resources: ObservedResource[],
  status: ObservedPhase['status']['status'] = 'Current',
  message = 'all Current',
): ObservedPhase {
  const manifest = {
    source: { kind: 'ConfigMap' },
    entries: resources.map((r) => ({
      group: 'apps',
      kind: 'Deployment',
      namespace: 'shop',
      name: r.key.split('/')[3] as string,
    })),
  };
  return {
    identity: IDENTITY,
    inventoryId: 'id-a',
    labels: {},
    manifest: { hash: hashDocument(manifest), ...manifest },
    status: {
      status,
      message,
      summary: counts(
        resources.filter((r) => r.status === 'Current').length,
        resources.filter((r) => r.status === 'InProgress').length,
      ),
      conditions: [],
    },
    resources,
  };
}

function ok(phases: ObservedPhase[], unobservedSources: string[] = []): ClusterObservation {
  return { outcome: 'ok', cluster: 'c1', at: AT, phases, unobservedSources };
}

/** The stored state that recording `observed` on an empty store would leave. */
function storedAfter(observed: ObservedPhase, extra: Partial<StoredPhase> = {}): StoredClusterState {
  const stored: StoredPhase = {
    id: 7,
    identity: observed.identity,
    inventoryId: observed.inventoryId,
    labels: observed.labels,
    deleted: false,
    manifest: { intervalId: 70, hash: observed.manifest.hash },
    status: {
      from: EARLIER,
      since: EARLIER,
      status: observed.status.status,
      message: observed.status.message,
      summary: observed.status.summary,
      conditions: [],
      worstResource: null,
      stale: false,
    },
    resources: observed.resources.map((r, i) => ({
      resourceId: 7000 + i,
      from: EARLIER,
      resourceKey: r.key,
      recorded: {
        status: r.status,
        reason: null,
        message: r.message,
        presence: r.presence,
        customHealth: null,
        applied: r.applied ?? null,
      },
      generation: r.generation ?? null,
      observedGeneration: r.observedGeneration ?? null,
      revisionDigest: null,
    })),
    ...extra,
  };
  const first = planSnapshot(emptyState(), ok([observed]));
  return {
    clusterId: 1,
    lastGoodReadAt: EARLIER,
    reachability: { id: 3, reachable: true, errorKind: null },
    lastTick: { outcome: 'ok', stateHash: first.stateHash },
    phases: [stored],
  };
}

function emptyState(): StoredClusterState {
  return { clusterId: 1, lastGoodReadAt: null, reachability: null, lastTick: null, phases: [] };
}

describe('planning a snapshot', () => {
  it('records everything on a first observation: the cluster, the phase and each resource', () => {
    const plan = planSnapshot(emptyState(), ok([phase([resource('web'), resource('api')])]));
    expect(plan.changes.map((c) => [c.scope, c.fromStatus, c.toStatus])).toEqual([
      ['cluster', null, 'Reachable'],
      ['phase', null, 'Current'],
      ['resource', null, 'Current'],
      ['resource', null, 'Current'],
    ]);
    expect(plan.phases).toHaveLength(1);
    expect(plan.phases[0]).toMatchObject({
      upsert: { inventoryId: 'id-a' },
      openManifest: expect.any(Object),
      openStatus: { stale: false },
    });
    expect(plan.phases[0]?.phaseId).toBeUndefined();
    expect(plan.tick).toBe('start');
  });

  it.each([
    [
      'a new message with the same status keeps',
      phase([resource('web'), resource('api')], 'Current', 'all Current, again'),
      EARLIER,
    ],
    [
      'a new status starts',
      phase([resource('web', 'InProgress'), resource('api')], 'InProgress', '1 of 2 not Current'),
      undefined,
    ],
  ])('%s the run (since) of the phase status', (_what, next, since) => {
    const observed = phase([resource('web'), resource('api')]);
    const plan = planSnapshot(storedAfter(observed), ok([next]));
    expect(plan.phases[0]?.openStatus?.since).toEqual(since);
  });

  it('writes nothing but the tick run for an unchanged observation', () => {
    const observed = phase([resource('web'), resource('api')]);
    const plan = planSnapshot(storedAfter(observed), ok([observed]));
    expect(plan).toMatchObject({ phases: [], changes: [], tick: 'extend' });
  });

  it.each([
    ['status', resource('web', 'InProgress', 'Deployment is available. Replicas: 2'), true],
    ['message', resource('web', 'Current', 'Deployment is available. Replicas: 3'), true],
    ['generation only', { ...resource('web'), generation: 2, observedGeneration: 2 }, false],
  ])('a %s change closes one interval and opens one', (_what, changed, visible) => {
    const observed = phase([resource('web'), resource('api')]);
    const plan = planSnapshot(storedAfter(observed), ok([phase([changed, resource('api')])]));
    const write = plan.phases[0];
    expect(write?.closeResources).toEqual([
      { resourceId: 7000, from: EARLIER, resourceKey: 'apps/Deployment/shop/web' },
    ]);
    expect(write?.openResources.map((o) => [o.resourceId, o.resource.key])).toEqual([
      [7000, 'apps/Deployment/shop/web'],
    ]);
    expect(plan.changes.filter((c) => c.scope === 'resource')).toHaveLength(visible ? 1 : 0);
    expect(plan.tick).toBe('start');
  });

  const H1 = hashStrings(['revision 1']);
  const H2 = hashStrings(['revision 2']);
  it.each([
    ['the same revision keeps its stored id', H1, false, 55],
    ['the same revision (given with its digest, as a watch cache does) keeps its stored id', H1, true, 55],
    ['a new revision is stored anew', H2, false, undefined],
    ['a new revision (given with its digest) is stored anew', H2, true, undefined],
  ])('a status change with %s', (_what, observedHash, withDigest, revisionId) => {
    const withRevision = (r: ObservedResource, hash: string): ObservedResource => ({
      ...r,
      revision: { hash, body: { kind: 'Deployment' }, ...(withDigest ? { digest: digestOfHex(hash) } : {}) },
    });
    const observed = phase([withRevision(resource('web'), H1)]);
    const stored = storedAfter(observed);
    const storedPhase = stored.phases[0] as StoredPhase;
    storedPhase.resources = storedPhase.resources.map((r) => ({
      ...r,
      revisionDigest: digestOfHex(H1),
      revisionId: 55,
    }));
    const plan = planSnapshot(stored, ok([phase([withRevision(resource('web', 'InProgress'), observedHash)])]));
    expect(plan.phases[0]?.openResources).toEqual([
      {
        resourceId: 7000,
        resource: expect.objectContaining({ status: 'InProgress' }),
        ...(revisionId === undefined ? {} : { revisionId }),
      },
    ]);
  });

  it('records a resource leaving the inventory with no new interval and a null toStatus', () => {
    const observed = phase([resource('web'), resource('api')]);
    const plan = planSnapshot(storedAfter(observed), ok([phase([resource('web')])]));
    expect(plan.phases[0]).toMatchObject({
      closeResources: [{ resourceId: 7001, from: EARLIER }],
      openResources: [],
      openManifest: expect.any(Object),
      closeManifestIntervalId: 70,
    });
    expect(plan.changes).toContainEqual(
      expect.objectContaining({
        scope: 'resource',
        resourceKey: 'apps/Deployment/shop/api',
        fromStatus: 'Current',
        toStatus: null,
      }),
    );
  });

  it("records a member's applier status change as its own change, after its status change when both moved", () => {
    const pending = { strategy: 'Apply', actuation: 'Pending', reconcile: 'Pending' };
    const succeeded = { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Succeeded' };
    const stored = storedAfter(
      phase([
        { ...resource('web', 'InProgress', 'Replicas: 1/2'), applied: pending },
        { ...resource('api'), applied: pending },
      ]),
    );
    const plan = planSnapshot(
      stored,
      ok([
        phase([
          { ...resource('web'), applied: succeeded },
          { ...resource('api'), applied: { ...pending, actuation: 'Succeeded' } },
        ]),
      ]),
    );
    expect(plan.changes.filter((c) => c.scope === 'resource')).toEqual([
      expect.objectContaining({
        resourceKey: 'apps/Deployment/shop/web',
        fromStatus: 'InProgress',
        toStatus: 'Current',
      }),
      expect.objectContaining({
        resourceKey: 'apps/Deployment/shop/web',
        fromStatus: 'Current',
        toStatus: 'Current',
        message: 'applied: actuation Pending → Succeeded, reconcile Pending → Succeeded',
        ownMessage: true,
      }),
      expect.objectContaining({
        resourceKey: 'apps/Deployment/shop/api',
        fromStatus: 'Current',
        toStatus: 'Current',
        message: 'applied: actuation Pending → Succeeded',
        ownMessage: true,
      }),
    ]);
    expect(plan.phases[0]?.openResources).toHaveLength(2);
    // Observed again as stored: nothing to write.
    const again = planSnapshot(
      stored,
      ok([
        phase([
          { ...resource('web', 'InProgress', 'Replicas: 1/2'), applied: pending },
          { ...resource('api'), applied: pending },
        ]),
      ]),
    );
    expect(again.phases).toEqual([]);
    expect(again.changes).toEqual([]);
  });

  it('takes a first applier status into the history without a change row (an upgrade logs nothing per member)', () => {
    const stored = storedAfter(phase([resource('web'), resource('api')]));
    const succeeded = { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Succeeded' };
    const plan = planSnapshot(
      stored,
      ok([
        phase([
          { ...resource('web'), applied: succeeded },
          { ...resource('api'), applied: succeeded },
        ]),
      ]),
    );
    // Each member's interval takes the applier status (statusAt reads it from then on) ...
    expect(plan.phases[0]?.openResources).toHaveLength(2);
    // ... and the change log says nothing: no member changed, phaselog only learnt more about it.
    expect(plan.changes.filter((c) => c.scope === 'resource')).toEqual([]);
  });

  it('deletes a phase whose inventory is gone, but not one whose source could not be listed', () => {
    const observed = phase([resource('web')]);
    const deleted = planSnapshot(storedAfter(observed), ok([]));
    expect(deleted.phases[0]).toMatchObject({
      markDeleted: true,
      closeStatusFrom: EARLIER,
      closeResources: [{ resourceId: 7000, from: EARLIER }],
      closeManifestIntervalId: 70,
    });
    expect(deleted.changes).toEqual([
      expect.objectContaining({ scope: 'phase', fromStatus: 'Current', toStatus: null }),
    ]);
    const unlisted = planSnapshot(storedAfter(observed), ok([], ['cli-utils']));
    expect(unlisted.phases).toEqual([]);
    expect(unlisted.changes).toEqual([]);
  });

  it('turns an outage into one reachability change and stale phases, touching no resource', () => {
    const observed = phase([resource('web'), resource('api')]);
    const plan = planSnapshot(storedAfter(observed), {
      outcome: 'unreachable',
      cluster: 'c1',
      at: AT,
      error: { kind: 'UNREACHABLE', message: 'ECONNREFUSED' },
    });
    expect(plan.changes).toEqual([
      { scope: 'cluster', fromStatus: 'Reachable', toStatus: 'Unreachable', message: 'ECONNREFUSED' },
    ]);
    expect(plan.reachability).toEqual({
      closeId: 3,
      open: { reachable: false, errorKind: 'UNREACHABLE', message: 'ECONNREFUSED' },
    });
    expect(plan.phases).toEqual([
      expect.objectContaining({
        closeStatusFrom: EARLIER,
        openStatus: expect.objectContaining({ status: 'Current', stale: true, staleSince: EARLIER }),
        closeResources: [],
        openResources: [],
      }),
    ]);
    expect(plan.cluster).toEqual({ reachable: false });
  });

  it('does not restate an outage that goes on, and clears staleness on recovery without status changes', () => {
    const observed = phase([resource('web')]);
    const state = storedAfter(observed);
    const down: StoredClusterState = {
      ...state,
      reachability: { id: 4, reachable: false, errorKind: 'UNREACHABLE' },
      lastTick: {
        outcome: 'unreachable',
        stateHash: planSnapshot(state, {
          outcome: 'unreachable',
          cluster: 'c1',
          at: AT,
          error: { kind: 'UNREACHABLE', message: 'x' },
        }).stateHash,
      },
      phases: state.phases.map((p) => ({ ...p, status: p.status && { ...p.status, stale: true } })),
    };
    const still = planSnapshot(down, {
      outcome: 'unreachable',
      cluster: 'c1',
      at: AT,
      error: { kind: 'UNREACHABLE', message: 'x' },
    });
    expect(still).toMatchObject({ changes: [], phases: [], tick: 'extend' });
    const back = planSnapshot(down, ok([observed]));
    expect(back.changes).toEqual([{ scope: 'cluster', fromStatus: 'Unreachable', toStatus: 'Reachable', message: '' }]);
    expect(back.phases[0]).toMatchObject({ closeStatusFrom: EARLIER, openStatus: { stale: false }, openResources: [] });
  });

  it('keeps the last status of resources that could not be read for a transient reason, and marks their phase stale', () => {
    const observed = phase([resource('web'), resource('api')]);
    const timedOut: ObservedResource = {
      ...resource('web', 'Unknown', 'HTTP 504: timeout'),
      reason: 'TIMEOUT',
      presence: 'Unknown',
      unread: true,
    };
    const plan = planSnapshot(
      storedAfter(observed),
      ok([phase([timedOut, resource('api')], 'Unknown', '1 of 2 resources not Current')]),
    );
    expect(plan.changes).toEqual([]);
    expect(plan.phases).toEqual([
      expect.objectContaining({
        closeResources: [],
        openResources: [],
        closeStatusFrom: EARLIER,
        openStatus: expect.objectContaining({ status: 'Current', stale: true, staleSince: EARLIER }),
      }),
    ]);
  });

  it('leaves phases a live observation did not look at alone, and keeps the observation run', () => {
    const observed = phase([resource('web')]);
    const other: StoredPhase = {
      ...(storedAfter(observed).phases[0] as StoredPhase),
      id: 8,
      identity: { ...IDENTITY, name: 'phase-b' },
    };
    const state = { ...storedAfter(observed), phases: [...storedAfter(observed).phases, other] };
    const changed = phase(
      [resource('web', 'InProgress', 'Deployment is not available')],
      'InProgress',
      '1 of 1 resources not Current',
    );
    const live = planSnapshot(state, {
      outcome: 'ok',
      cluster: 'c1',
      at: AT,
      phases: [changed],
      unobservedSources: [],
      live: true,
    });
    expect(live.tick).toBe('keep');
    expect(live.phases.map((p) => [p.identity.name, p.markDeleted ?? false])).toEqual([['phase-a', false]]);
    expect(live.changes.map((c) => [c.scope, c.fromStatus, c.toStatus])).toEqual([
      ['phase', 'Current', 'InProgress'],
      ['resource', 'Current', 'InProgress'],
    ]);
    // The same phases observed as a whole cluster: phase-b is gone, and a new run starts.
    const whole = planSnapshot(state, ok([changed]));
    expect(whole.phases.map((p) => [p.identity.name, p.markDeleted ?? false])).toEqual([
      ['phase-a', false],
      ['phase-b', true],
    ]);
    expect(whole.tick).toBe('start');
  });
});

describe('the hash of an observation (equal: the snapshot changes nothing, one row per cluster)', () => {
  const other = (resources: ObservedResource[]): ObservedPhase => ({
    ...phase(resources),
    identity: { ...IDENTITY, name: 'phase-b' },
    inventoryId: 'id-b',
  });

  it('does not depend on the order the API listed phases and resources in', () => {
    const a = phase([resource('web'), resource('api'), resource('db')]);
    const b = other([resource('queue'), resource('cache')]);
    const reordered = { ...a, resources: [...a.resources].reverse() };
    expect(hashObservation(ok([a, b]))).toBe(hashObservation(ok([b, reordered])));
  });

  it("changes when a resource's status, message or generation changes, or when it moves to another phase", () => {
    const base = hashObservation(ok([phase([resource('web'), resource('api')]), other([resource('queue')])]));
    expect(
      hashObservation(ok([phase([resource('web', 'InProgress'), resource('api')]), other([resource('queue')])])),
    ).not.toBe(base);
    expect(
      hashObservation(
        ok([
          phase([resource('web', 'Current', 'Deployment is available. Replicas: 3'), resource('api')]),
          other([resource('queue')]),
        ]),
      ),
    ).not.toBe(base);
    expect(
      hashObservation(
        ok([phase([{ ...resource('web'), generation: 2 }, resource('api')]), other([resource('queue')])]),
      ),
    ).not.toBe(base);
    expect(hashObservation(ok([phase([resource('web')]), other([resource('queue'), resource('api')])]))).not.toBe(base);
  });

  it('changes when a source is unobserved or the cluster is unreachable', () => {
    const base = hashObservation(ok([phase([resource('web')])]));
    expect(hashObservation(ok([phase([resource('web')])], ['flux']))).not.toBe(base);
    expect(
      hashObservation({
        outcome: 'unreachable',
        cluster: 'c1',
        at: AT,
        error: { kind: 'UNREACHABLE', message: 'x' },
      } as ClusterObservation),
    ).not.toBe(base);
  });

  it("changes when one field's text moves into the next (reason into message, a key into the status)", () => {
    const base = hashObservation(ok([phase([{ ...resource('web'), reason: 'Progressing', message: 'deadline' }])]));
    expect(hashObservation(ok([phase([{ ...resource('web'), message: 'Progressingdeadline' }])]))).not.toBe(base);
    expect(hashObservation(ok([phase([{ ...resource('web'), reason: 'Progressingdeadline', message: '' }])]))).not.toBe(
      base,
    );
    const generations = hashObservation(ok([phase([{ ...resource('web'), generation: 12, observedGeneration: 3 }])]));
    expect(hashObservation(ok([phase([{ ...resource('web'), generation: 1, observedGeneration: 23 }])]))).not.toBe(
      generations,
    );
  });

  it('is the same whether a revision comes with its digest (a watch cache) or its hex hash only (a list)', () => {
    const hash = hashStrings(['web']);
    const listed = hashObservation(ok([phase([{ ...resource('web'), revision: { hash, body: {} } }])]));
    expect(
      hashObservation(ok([phase([{ ...resource('web'), revision: { hash, digest: digestOfHex(hash), body: {} } }])])),
    ).toBe(listed);
    expect(
      hashObservation(ok([phase([{ ...resource('web'), revision: { hash: hashStrings(['web, next']), body: {} } }])])),
    ).not.toBe(listed);
  });

  it('changes when a resource could not be read, or gets a revision, custom health or an applier status', () => {
    expect(hashObservation(ok([phase([{ ...resource('web'), applied: { actuation: 'Pending' } }])]))).not.toBe(
      hashObservation(ok([phase([{ ...resource('web'), applied: { actuation: 'Succeeded' } }])])),
    );
    const base = hashObservation(ok([phase([resource('web')])]));
    expect(hashObservation(ok([phase([{ ...resource('web'), unread: true }])]))).not.toBe(base);
    expect(
      hashObservation(ok([phase([{ ...resource('web'), revision: { hash: hashStrings(['web']), body: {} } }])])),
    ).not.toBe(base);
    expect(
      hashObservation(
        ok([
          phase([{ ...resource('web'), customHealth: { engine: 'lua', source: 'x', health: 'Healthy', message: '' } }]),
        ]),
      ),
    ).not.toBe(base);
  });
});

describe("a plan's observation run", () => {
  const observed = phase([resource('web'), resource('api')]);
  const changed = phase(
    [resource('web', 'InProgress', 'Deployment does not have minimum availability.'), resource('api')],
    'InProgress',
    '1 of 2 resources not Current',
  );

  it('starts a new run when the observation hashes otherwise than the current run', () => {
    const stored = {
      ...storedAfter(observed),
      lastTick: { outcome: 'ok', stateHash: hashObservation(ok([observed])) },
    };
    const later = planSnapshot(stored, ok([changed]));
    expect(later).toMatchObject({ tick: 'start', stateHash: hashObservation(ok([changed])) });
    expect(later.changes.length).toBeGreaterThan(0);
  });

  it("extends the cluster's run when the hash is the run's", () => {
    const stored = {
      ...storedAfter(observed),
      lastTick: { outcome: 'ok', stateHash: hashObservation(ok([observed])) },
    };
    expect(planSnapshot(stored, ok([observed]))).toMatchObject({ tick: 'extend', phases: [], changes: [] });
  });

  it('keeps the run of a live observation, whatever its hash', () => {
    const stored = { ...storedAfter(observed), lastTick: { outcome: 'ok', stateHash: 'run' } };
    expect(planSnapshot(stored, { ...ok([changed]), live: true } as ClusterObservation, 'run').tick).toBe('keep');
  });
});
