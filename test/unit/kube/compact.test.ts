/**
 * A watch cache keeps compact records instead of objects (src/kube/compact.ts). Statuses computed
 * from a record's view, and revisions taken from it, must be exactly those of the whole object.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildTypicalObject } from '../../../bench/lib/k8s-objects.ts';
import { hashRedacted } from '../../../src/history/redact.ts';
import { compactObject, readView, releaseStoredBody, statusView, toHashedDocument } from '../../../src/kube/compact.ts';
import { slimObject } from '../../../src/kube/slim.ts';
import { computeStatus } from '../../../src/status/compute.ts';
import { fillTimes, fixture, loadCases, mergePatch, NOW, type ObjectName } from '../status/fixtures.ts';

type Obj = Record<string, unknown>;

const sharedCases = JSON.parse(readFileSync('/work/shared/conformance/kstatus/cases.json', 'utf8')) as {
  name: string;
  object: Obj;
}[];
const FIXTURE_NAMES: ObjectName[] = [
  'deployment',
  'statefulset',
  'daemonset',
  'replicaset',
  'pod',
  'pvc',
  'service',
  'job',
  'cronjob',
  'pdb',
  'crd',
  'configmap',
  'secret',
  'kustomization',
  'namespace',
];

/** Objects whose fields have the wrong types: rules must report the same errors from the view. */
const MALFORMED: Obj[] = [
  mergePatch(fixture('pod'), {
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [
        { name: 'a', state: { waiting: { reason: 'CrashLoopBackOff' } } },
        { name: 'b', state: 'oops' },
      ],
    },
  }) as Obj,
  mergePatch(fixture('pod'), {
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'a', state: { waiting: 7 } }],
    },
  }) as Obj,
  mergePatch(fixture('pod'), {
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: 'none' },
  }) as Obj,
  mergePatch(fixture('pod'), {
    status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    metadata: { creationTimestamp: new Date(NOW.getTime() - 5_000).toISOString().replace(/\.\d+Z$/, 'Z') },
  }) as Obj,
  mergePatch(fixture('deployment'), { spec: { replicas: 'three' } }) as Obj,
  mergePatch(fixture('deployment'), { status: { conditions: [{ type: 'Available', status: 5 }] } }) as Obj,
  mergePatch(fixture('statefulset'), {
    spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 'x' } } },
  }) as Obj,
  mergePatch(fixture('kustomization'), { status: { conditions: 'not a list' } }) as Obj,
  { ...fixture('deployment'), spec: 'not a map' },
  { ...fixture('deployment'), status: ['not', 'a', 'map'] },
  { ...fixture('service'), metadata: 'not a map' },
  mergePatch(fixture('crd'), { metadata: { deletionTimestamp: '2026-03-01T11:00:00Z' } }) as Obj,
];

function everyObject(): { name: string; object: Obj }[] {
  return [
    ...loadCases().map((c) => ({ name: `fixture ${c.name}`, object: fillTimes(c.object) })),
    ...sharedCases.map((c) => ({ name: `shared ${c.name}`, object: fillTimes(c.object) })),
    ...FIXTURE_NAMES.map((name) => ({ name: `object ${name}`, object: fixture(name) })),
    ...MALFORMED.map((object, i) => ({ name: `malformed ${i}`, object })),
    ...Array.from({ length: 10 }, (_, i) => ({ name: `typical ${i}`, object: buildTypicalObject(i) })),
  ];
}

describe('compact cache records', () => {
  const cases = everyObject();
  const pods = cases.map((c) => c.object).filter((o) => o.kind === 'Pod');

  it.each(cases)('$name: the view gives the same status as the whole object', ({ object }) => {
    const slim = slimObject(object);
    const view = readView(compactObject(slim));
    expect(computeStatus(view, { now: NOW })).toEqual(computeStatus(object, { now: NOW }));
    // The pod-aware rule reads the owner's selector and the pods' labels and status from views too.
    const podViews = pods.map((p) => readView(compactObject(slimObject(p))));
    expect(computeStatus(view, { now: NOW, pods: podViews })).toEqual(computeStatus(object, { now: NOW, pods }));
  });

  it.each(cases)('$name: the revision is the one hashed from the whole object', ({ object }) => {
    const expected = hashRedacted(object);
    const revision = toHashedDocument(compactObject(slimObject(object)));
    expect(revision.hash).toBe(expected.hash);
    expect(revision.body).toEqual(expected.body);
  });

  it('redacts again when the snapshot drops annotations the cache kept', () => {
    const object = mergePatch(fixture('deployment'), {
      metadata: { annotations: { 'example.com/token': 'abc', keep: 'yes' } },
    }) as Obj;
    const options = { dropAnnotations: ['example.com/token'] };
    const revision = toHashedDocument(compactObject(slimObject(object)), options);
    expect(revision).toEqual(hashRedacted(object, options));
    expect(JSON.stringify(revision.body)).not.toContain('abc');
    const matching = toHashedDocument(compactObject(slimObject(object), { redaction: options }), options);
    expect(matching.hash).toBe(hashRedacted(object, options).hash);
  });

  it('keeps the whole object for kinds a custom health check reads', () => {
    const object = fixture('kustomization');
    expect(readView(compactObject(slimObject(object), { whole: true }))).toEqual(slimObject(object));
  });

  it.each([
    ['deployment', false],
    ['service', false],
    ['pod', true],
    ['statefulset', true],
  ])(
    '%s: the view is packed with the revision unless its status is computed on every tick (clear: %s)',
    (name, clear) => {
      const object = cases.find((c) => (c.object.kind as string).toLowerCase() === name)?.object as Obj;
      const record = compactObject(slimObject(object));
      expect(record.view !== '').toBe(clear);
      expect(readView(record)).toEqual(JSON.parse(JSON.stringify(statusView(slimObject(object)))));
      expect(toHashedDocument(record).body).toEqual(hashRedacted(object).body);
    },
  );

  it("keeps of a Pod's conditions those its status is computed from, all of them when one is malformed", () => {
    const conditions = [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
      { type: 'ContainersReady', status: 'False' },
      { type: 'PodScheduled', status: 'True' },
    ];
    const pod = mergePatch(fixture('pod'), { status: { phase: 'Running', conditions } }) as Obj;
    expect((readView(compactObject(slimObject(pod))).status as { conditions: unknown[] }).conditions).toEqual([
      conditions[1],
      conditions[3],
    ]);
    const malformed = mergePatch(fixture('pod'), {
      status: { phase: 'Running', conditions: [...conditions, { type: 'Ready', status: 7 }] },
    }) as Obj;
    expect(
      (readView(compactObject(slimObject(malformed))).status as { conditions: unknown[] }).conditions,
    ).toHaveLength(5);
    expect(computeStatus(readView(compactObject(slimObject(malformed))), { now: NOW })).toEqual(
      computeStatus(malformed, { now: NOW }),
    );
  });

  it('drops the body once a snapshot stored the revision, keeping what later ticks read', () => {
    const pod = compactObject(slimObject(fixture('pod')));
    const view = readView(pod);
    const hash = toHashedDocument(pod).hash;
    releaseStoredBody(pod);
    // A Pod's view is read every tick: only the revision goes; its hash stays, its body is absent.
    expect(pod).toMatchObject({ hasBody: false, hasView: true });
    expect(readView(pod)).toEqual(view);
    expect(toHashedDocument(pod)).toMatchObject({ hash, body: undefined });
    expect(() => pod.unpack()).toThrow(/read the object from the API server/);

    // A packed view goes with the revision only once the status layer memoised what it computed.
    const deployment = compactObject(slimObject(fixture('deployment')));
    releaseStoredBody(deployment);
    expect(deployment).toMatchObject({ hasBody: true, hasView: true });
    deployment.memo = { computed: true };
    releaseStoredBody(deployment);
    expect(deployment).toMatchObject({ hasBody: false, hasView: false });

    // An inventory object's whole view is parsed from it again when it must be stored: never dropped.
    const inventory = compactObject(slimObject(fixture('configmap')), { whole: true, clear: false });
    inventory.memo = { computed: true };
    releaseStoredBody(inventory);
    expect(readView(inventory)).toEqual(slimObject(fixture('configmap')));
  });

  it('keeps far less than the object', () => {
    const object = buildTypicalObject(0);
    const record = compactObject(slimObject(object));
    expect(record.size).toBeLessThan(JSON.stringify(object).length / 3);
  });
});
