import { describe, expect, it } from 'vitest';
import { advanceClusterState } from '../../../src/history/advance-state.ts';
import { planSnapshot } from '../../../src/history/plan-snapshot.ts';
import type { ClusterObservation, ObservedResource, StoredClusterState } from '../../../src/history/types.ts';

const IDENTITY = { sourceKind: 'cli-utils', namespace: 'shop', name: 'phase-a' };
const READY = 'Deployment is available. Replicas: 2';
const counts = (current: number) => ({
  Current: current,
  InProgress: 0,
  Failed: 0,
  Terminating: 0,
  NotFound: 0,
  Unknown: 0,
});

function resource(name: string, status: ObservedResource['status'] = 'Current', message = READY): ObservedResource {
  return {
    key: `apps/Deployment/shop/${name}`,
    status,
    message,
    conditions: [],
    presence: 'Present',
    generation: 1,
    observedGeneration: 1,
  };
}

function observe(at: Date, resources: ObservedResource[]): ClusterObservation {
  return {
    outcome: 'ok',
    cluster: 'c1',
    at,
    unobservedSources: [],
    phases: [
      {
        identity: IDENTITY,
        inventoryId: 'id-a',
        labels: {},
        manifest: { hash: 'm1', source: {}, entries: [] },
        status: { status: 'Current', message: 'all Current', summary: counts(resources.length), conditions: [] },
        resources,
      },
    ],
  };
}

/** The state a store holds after recording `resources` as Current. */
function stored(resources: ObservedResource[]): StoredClusterState {
  const at = new Date('2026-03-01T09:00:00Z');
  const recorded = {
    status: 'Current',
    reason: null,
    message: READY,
    presence: 'Present',
    customHealth: null,
    applied: null,
  };
  return {
    clusterId: 1,
    lastGoodReadAt: at,
    reachability: { id: 3, reachable: true, errorKind: null },
    lastTick: null,
    phases: [
      {
        id: 7,
        identity: IDENTITY,
        inventoryId: 'id-a',
        labels: {},
        deleted: false,
        manifest: { intervalId: 70, hash: 'm1' },
        status: {
          from: at,
          since: at,
          status: 'Current',
          message: 'all Current',
          summary: counts(resources.length),
          conditions: [],
          worstResource: null,
          stale: false,
        },
        resources: resources.map((r, i) => ({
          resourceId: 7000 + i,
          from: at,
          resourceKey: r.key,
          recorded,
          generation: 1,
          observedGeneration: 1,
          revisionDigest: null,
          revisionId: null,
        })),
      },
    ],
  };
}

/** `state` after recording `resources` at `at`, the writer giving no revision ids. */
function advance(state: StoredClusterState, at: Date, resources: ObservedResource[]): StoredClusterState {
  const plan = planSnapshot(state, observe(at, resources));
  const opened = plan.phases.flatMap((w) => w.openResources);
  const next = advanceClusterState(state, plan, {
    resources: new Map(),
    revisions: new Map(opened.map((o) => [o.resourceId as number, null])),
  });
  if (next === undefined) throw new Error('no state after the plan');
  return next;
}

describe('advancing a kept cluster state', () => {
  it('records what the resources say now, and a resource back to what the others say shares their status', () => {
    const names = ['web', 'api', 'queue'];
    let state = stored(names.map((n) => resource(n)));
    state = advance(state, new Date('2026-03-01T09:01:00Z'), [
      resource('web', 'InProgress', 'rolling'),
      resource('api'),
      resource('queue'),
    ]);
    state = advance(
      state,
      new Date('2026-03-01T09:02:00Z'),
      names.map((n) => resource(n)),
    );
    const [web, api, queue] = state.phases[0]?.resources ?? [];
    expect(web).toMatchObject({
      resourceId: 7000,
      from: new Date('2026-03-01T09:02:00Z'),
      recorded: { status: 'Current', message: READY },
    });
    expect(web?.recorded).toBe(api?.recorded);
    expect(queue?.recorded).toBe(api?.recorded);
  });
});
