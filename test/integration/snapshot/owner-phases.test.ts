/**
 * Owner phases against the emulator and a real database: an LCM Phase custom resource is a phase
 * of itself and the Jobs, Pods and Workflows that name it as owner. Its history follows its tasks:
 * a Job running, completing, then replaced by one that fails; a broken ownership (a cycle, a
 * dangling owner) is that phase's error, and the other phases are recorded as if nothing happened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  customResourceDefinition,
  jobPod,
  lcmPhase,
  ownedJob,
  ownedWorkflow,
  ownerPhaseCrds,
  ownerReferenceTo,
} from '../../../src/demo/objects.ts';
import type { OwnerKindSpec } from '../../../src/inventory/owner-phase.ts';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import {
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  type EmulatedCluster,
  type TestDatabase,
} from './helpers.ts';

const OWNERS: OwnerKindSpec[] = [
  {
    kind: { group: 'lcm.example.dev', kind: 'Phase' },
    ownedKinds: [
      { group: 'batch', kind: 'Job' },
      { group: '', kind: 'Pod' },
      { group: 'argoproj.io', kind: 'Workflow' },
    ],
  },
];

const T0 = Date.parse('2026-11-26T10:00:00.000Z');
const at = (minutes: number): Date => new Date(T0 + minutes * 60_000);
/** The observation clock: each snapshot observes at its own minute. */
let clock = at(0);

describe('owner phases', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;
  let deps: SnapshotDeps;
  const keystone = lcmPhase('openstack', 'install-keystone', 'uid-keystone');

  beforeAll(async () => {
    database = await createTestDatabase('owner_phases');
    cluster = await startEmulatedCluster('lcm');
    cluster.emulator.apply(ownerPhaseCrds());
    cluster.emulator.apply([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'openstack' } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'broken' } },
    ]);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('owners') });
    deps = {
      recorder: createRecorder(createSnapshotStore(database.db)),
      publisher,
      log: testLogger(),
      observe: { owners: OWNERS, now: () => clock },
    };
  });
  afterAll(async () => {
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  async function phaseRow(namespace: string, name: string) {
    return database.db.phase.findFirstOrThrow({ where: { namespace, name, sourceKind: 'owner' } });
  }

  async function currentStatus(namespace: string, name: string): Promise<{ status: string; message: string }> {
    const phase = await phaseRow(namespace, name);
    const current = await database.db.phaseCurrentStatus.findUniqueOrThrow({ where: { phaseId: phase.id } });
    const detail = await database.db.statusDetail.findUniqueOrThrow({ where: { id: current.detailId } });
    return { status: current.status, message: String((detail.body as { message?: unknown }).message) };
  }

  async function memberNames(namespace: string, name: string): Promise<string[]> {
    const phase = await phaseRow(namespace, name);
    const link = await database.db.phaseManifest.findFirstOrThrow({
      where: { phaseId: phase.id, to: null },
      include: { manifest: true },
    });
    const entries = (link.manifest as unknown as { entries: { kind: string; name: string }[] }).entries;
    return entries.map((e) => `${e.kind} ${e.name}`).sort();
  }

  it('follows a Job from running to complete, then its failing replacement, with the times of each change', async () => {
    const dbSync = ownedJob(keystone, 'keystone-db-sync', 'uid-job-1', 'running');
    cluster.emulator.apply([keystone, dbSync, jobPod(dbSync, 'keystone-db-sync-7xk2p', 'uid-pod-1', 'running')]);
    clock = at(0);
    await snapshotCluster(deps, cluster.client, clock);
    expect(await currentStatus('openstack', 'install-keystone')).toMatchObject({ status: 'InProgress' });
    expect(await memberNames('openstack', 'install-keystone')).toEqual([
      'Job keystone-db-sync',
      'Phase install-keystone',
      'Pod keystone-db-sync-7xk2p',
    ]);

    cluster.emulator.apply([
      ownedJob(keystone, 'keystone-db-sync', 'uid-job-1', 'complete'),
      jobPod(dbSync, 'keystone-db-sync-7xk2p', 'uid-pod-1', 'complete'),
    ]);
    clock = at(1);
    await snapshotCluster(deps, cluster.client, clock);
    expect(await currentStatus('openstack', 'install-keystone')).toMatchObject({ status: 'Current' });

    // The operator replaces the finished Job with the next task, which fails; the old Pod goes with its Job.
    cluster.emulator.remove({ apiVersion: 'batch/v1', kind: 'Job', namespace: 'openstack', name: 'keystone-db-sync' });
    const bootstrap = ownedJob(keystone, 'keystone-bootstrap', 'uid-job-2', 'failed');
    cluster.emulator.apply([bootstrap, jobPod(bootstrap, 'keystone-bootstrap-q9w4z', 'uid-pod-2', 'failed')]);
    clock = at(2);
    await snapshotCluster(deps, cluster.client, clock);
    const failed = await currentStatus('openstack', 'install-keystone');
    expect(failed.status).toBe('Failed');
    expect(failed.message).toContain('keystone-bootstrap');
    expect(await memberNames('openstack', 'install-keystone')).toEqual([
      'Job keystone-bootstrap',
      'Phase install-keystone',
      'Pod keystone-bootstrap-q9w4z',
    ]);

    const phase = await phaseRow('openstack', 'install-keystone');
    const changes = await database.db.statusChange.findMany({
      where: { phaseId: phase.id, scope: 'phase' },
      orderBy: { seq: 'asc' },
    });
    expect(changes.map((c) => [c.at.toISOString(), c.fromStatus, c.toStatus])).toEqual([
      [at(0).toISOString(), null, 'InProgress'],
      [at(1).toISOString(), 'InProgress', 'Current'],
      [at(2).toISOString(), 'Current', 'Failed'],
    ]);
    // The member list is the phase's manifest: a new one when the Jobs changed, none when only statuses did.
    const manifests = await database.db.phaseManifest.findMany({
      where: { phaseId: phase.id },
      orderBy: { from: 'asc' },
    });
    expect(manifests.map((m) => [m.from.toISOString(), m.to?.toISOString() ?? null])).toEqual([
      [at(0).toISOString(), at(2).toISOString()],
      [at(2).toISOString(), null],
    ]);
  });

  it('reads an owned Argo Workflow as Argo CD does: Running is InProgress, Succeeded Current', async () => {
    const glance = lcmPhase('openstack', 'install-glance', 'uid-glance');
    cluster.emulator.apply([
      glance,
      ownedWorkflow(glance, 'glance-deploy', 'uid-wf-1', 'Running', 'step 1/3: migrate'),
    ]);
    clock = at(3);
    await snapshotCluster(deps, cluster.client, clock);
    expect(await currentStatus('openstack', 'install-glance')).toMatchObject({ status: 'InProgress' });
    expect((await currentStatus('openstack', 'install-glance')).message).toContain('step 1/3: migrate');
    cluster.emulator.apply(ownedWorkflow(glance, 'glance-deploy', 'uid-wf-1', 'Succeeded'));
    clock = at(4);
    await snapshotCluster(deps, cluster.client, clock);
    expect(await currentStatus('openstack', 'install-glance')).toMatchObject({ status: 'Current' });
  });

  it('a live snapshot of a new Job records the owner phase in its namespace, not the others', async () => {
    const retry = ownedJob(keystone, 'keystone-bootstrap-retry', 'uid-job-3', 'running');
    cluster.emulator.apply(retry);
    clock = at(4.5);
    const outcome = await snapshotCluster(deps, cluster.client, clock, {
      changed: {
        objects: [{ group: 'batch', kind: 'Job', namespace: 'openstack', name: 'keystone-bootstrap-retry' }],
        inventories: [],
      },
    });
    expect(outcome).toMatchObject({ written: true, live: true });
    expect(await memberNames('openstack', 'install-keystone')).toEqual([
      'Job keystone-bootstrap',
      'Job keystone-bootstrap-retry',
      'Phase install-keystone',
      'Pod keystone-bootstrap-q9w4z',
    ]);
    // Still Failed: the failed Job is still there beside its retry.
    expect(await currentStatus('openstack', 'install-keystone')).toMatchObject({ status: 'Failed' });
  });

  it('an ownership cycle and a dangling owner are errors of their own phases, in words, and the others are unaffected', async () => {
    // A Phase owned by its own Job: the Job names the Phase, the Phase names the Job.
    const looped = lcmPhase('broken', 'install-heat', 'uid-heat');
    const heatJob = ownedJob(looped, 'heat-bootstrap', 'uid-heat-job', 'complete');
    const loopedWithOwner = {
      ...looped,
      metadata: { ...(looped.metadata as object), ownerReferences: [ownerReferenceTo(heatJob)] },
    };
    // A Job of a Phase that also names a Job that no longer exists.
    const nova = lcmPhase('broken', 'install-nova', 'uid-nova');
    const novaJob = ownedJob(nova, 'nova-db-sync', 'uid-nova-job', 'complete');
    const novaJobDangling = {
      ...novaJob,
      metadata: {
        ...(novaJob.metadata as object),
        ownerReferences: [
          ownerReferenceTo(nova),
          { apiVersion: 'batch/v1', kind: 'Job', name: 'nova-prepare', uid: 'uid-deleted-long-ago' },
        ],
      },
    };
    cluster.emulator.apply([loopedWithOwner, heatJob, nova, novaJobDangling]);
    clock = at(5);
    await snapshotCluster(deps, cluster.client, clock);

    const heat = await currentStatus('broken', 'install-heat');
    expect(heat.status).toBe('Failed');
    expect(heat.message).toContain(
      'ownerReferences form a cycle: lcm.example.dev/Phase install-heat owns batch/Job heat-bootstrap owns lcm.example.dev/Phase install-heat',
    );
    const novaStatus = await currentStatus('broken', 'install-nova');
    expect(novaStatus.status).toBe('Failed');
    expect(novaStatus.message).toContain(
      'batch/Job nova-db-sync names an owner that does not exist: batch/Job nova-prepare (uid uid-deleted-long-ago)',
    );
    // Both broken phases still list what they reached.
    expect(await memberNames('broken', 'install-heat')).toEqual(['Job heat-bootstrap', 'Phase install-heat']);
    // The other phases are recorded as before.
    expect(await currentStatus('openstack', 'install-glance')).toMatchObject({ status: 'Current' });
    expect(await currentStatus('openstack', 'install-keystone')).toMatchObject({ status: 'Failed' });
    expect((await currentStatus('openstack', 'install-keystone')).message).not.toContain('cycle');
  });

  it('an owner deleted takes its phase with it on the next snapshot', async () => {
    cluster.emulator.remove({
      apiVersion: 'lcm.example.dev/v1alpha1',
      kind: 'Phase',
      namespace: 'openstack',
      name: 'install-glance',
    });
    clock = at(6);
    await snapshotCluster(deps, cluster.client, clock);
    const phase = await phaseRow('openstack', 'install-glance');
    expect(phase.deletedAt?.toISOString()).toBe(at(6).toISOString());
  });
});

describe('owner phases when the cluster will not tell', () => {
  let cluster: EmulatedCluster;

  beforeAll(async () => {
    cluster = await startEmulatedCluster('lcm-faults');
    cluster.emulator.apply(ownerPhaseCrds());
    const phase = lcmPhase('default', 'install-swift', 'uid-swift');
    const job = ownedJob(phase, 'swift-ring-builder', 'uid-swift-job', 'complete');
    cluster.emulator.apply([phase, job, jobPod(job, 'swift-ring-builder-abcde', 'uid-swift-pod', 'complete')]);
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('an owned kind it may not list makes the phase Unknown, saying which kind and why', async () => {
    const undo = cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'pods' },
      effect: 'status',
      statusCode: 403,
    });
    try {
      const observation = await observeCluster(cluster.client, { owners: OWNERS });
      if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
      const swift = observation.phases.find((p) => p.identity.name === 'install-swift');
      expect(swift?.status.status).toBe('Unknown');
      expect(swift?.status.message).toMatch(/^cannot list Pod to find what the owner owns: FORBIDDEN/);
    } finally {
      undo();
    }
  });

  it('an owner kind the cluster does not serve gives no phases and no error', async () => {
    const observation = await observeCluster(cluster.client, {
      owners: [
        {
          kind: { group: 'openstacklcm.airshipit.org', kind: 'OsPhase' },
          ownedKinds: [{ group: 'batch', kind: 'Job' }],
        },
      ],
    });
    if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
    expect(observation.phases.filter((p) => p.identity.sourceKind === 'owner')).toEqual([]);
    expect(observation.unobservedSources).toEqual([]);
  });

  it('an owner kind it may not list is an unobserved source, not a cluster outage', async () => {
    const undo = cluster.emulator.injectFault({
      match: { verb: 'list', resource: 'phases' },
      effect: 'status',
      statusCode: 403,
    });
    try {
      const observation = await observeCluster(cluster.client, { owners: OWNERS });
      expect(observation.outcome).toBe('ok');
      if (observation.outcome === 'ok') expect(observation.unobservedSources).toContain('owner');
    } finally {
      undo();
    }
  });
});

describe('owner phases of two kinds with one name', () => {
  let database: TestDatabase;
  let cluster: EmulatedCluster;
  let publisher: ChangePublisher;

  beforeAll(async () => {
    database = await createTestDatabase('owner_names');
    cluster = await startEmulatedCluster('lcm-names');
    cluster.emulator.apply([...ownerPhaseCrds(), customResourceDefinition('tasks.example.dev', 'v1', 'Task', 'tasks')]);
    const phase = lcmPhase('default', 'upgrade', 'uid-upgrade-phase');
    const task = {
      apiVersion: 'tasks.example.dev/v1',
      kind: 'Task',
      metadata: { name: 'upgrade', namespace: 'default', uid: 'uid-upgrade-task' },
      spec: {},
    };
    cluster.emulator.apply([phase, task, ownedJob(phase, 'upgrade-db', 'uid-upgrade-job', 'complete')]);
    publisher = createChangePublisher(REDIS_URL, { prefix: uniqueId('owner-names') });
  });
  afterAll(async () => {
    await publisher?.close();
    await cluster?.close();
    await database?.drop();
  });

  it("records the first kind's phase, saying which owner was left out, instead of failing the snapshot", async () => {
    const owners: OwnerKindSpec[] = [
      ...OWNERS,
      { kind: { group: 'tasks.example.dev', kind: 'Task' }, ownedKinds: [{ group: 'batch', kind: 'Job' }] },
    ];
    const deps: SnapshotDeps = {
      recorder: createRecorder(createSnapshotStore(database.db)),
      publisher,
      log: testLogger(),
      observe: { owners },
    };
    expect(await snapshotCluster(deps, cluster.client, new Date())).toMatchObject({ written: true });
    const phases = await database.db.phase.findMany({ where: { sourceKind: 'owner' } });
    expect(phases.map((p) => `${p.namespace}/${p.name}`)).toEqual(['default/upgrade']);
    const current = await database.db.phaseCurrentStatus.findUniqueOrThrow({ where: { phaseId: phases[0]?.id ?? -1 } });
    const detail = await database.db.statusDetail.findUniqueOrThrow({ where: { id: current.detailId } });
    expect(current.status).toBe('Failed');
    expect(String((detail.body as { message?: unknown }).message)).toContain(
      'tasks.example.dev/Task default/upgrade is an owner too',
    );
  });
});
