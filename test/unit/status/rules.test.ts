import { describe, expect, it } from 'vitest';
import { computeStatus } from '../../../src/status/index.ts';
import type { ResourceStatus } from '../../../src/status/index.ts';
import { fixture, patched } from './fixtures.ts';
import type { ObjectName } from './fixtures.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

type Row = [
  behaviour: string,
  object: Record<string, unknown>,
  status: ResourceStatus,
  reason: string | undefined,
  message: string,
];

function cond(type: string, status: string, reason = '', message = ''): Record<string, string> {
  return { type, status, reason, message, lastTransitionTime: '2026-02-28T09:16:10Z' };
}

function check(
  object: Record<string, unknown>,
  status: ResourceStatus,
  reason: string | undefined,
  message: string,
): void {
  const result = computeStatus(object, { now: NOW });
  expect({ status: result.status, message: result.message }).toEqual({ status, message });
  if (status === 'InProgress')
    expect(result.conditions).toEqual([{ type: 'Reconciling', status: 'True', reason, message }]);
  if (status === 'Current') expect(result.conditions).toEqual([]);
  if (status === 'Failed') expect(result.conditions.map((c) => [c.type, c.reason])).toEqual([['Stalled', reason]]);
}

const deploymentRows: Row[] = [
  [
    'a rolled-out Deployment is Current',
    fixture('deployment'),
    'Current',
    undefined,
    'Deployment is available. Replicas: 3',
  ],
  [
    'a Deployment past its progress deadline is Failed',
    patched('deployment', {
      status: {
        conditions: [
          cond('Available', 'True'),
          cond('Progressing', 'False', 'ProgressDeadlineExceeded', 'ReplicaSet "web-1" has timed out progressing.'),
        ],
      },
    }),
    'Failed',
    'ProgressDeadlineExceeded',
    'Progress deadline exceeded',
  ],
  [
    'a Deployment missing replicas is InProgress LessReplicas',
    patched('deployment', { status: { replicas: 2 } }),
    'InProgress',
    'LessReplicas',
    'Replicas: 2/3',
  ],
  [
    'a Deployment with old pods is InProgress LessUpdated',
    patched('deployment', { status: { updatedReplicas: 1 } }),
    'InProgress',
    'LessUpdated',
    'Updated: 1/3',
  ],
  [
    'a Deployment with surplus pods is InProgress ExtraPods',
    patched('deployment', { status: { replicas: 4 } }),
    'InProgress',
    'ExtraPods',
    'Pending termination: 1',
  ],
  [
    'a Deployment with unavailable updated pods is InProgress LessAvailable',
    patched('deployment', { status: { availableReplicas: 2 } }),
    'InProgress',
    'LessAvailable',
    'Available: 2/3',
  ],
  [
    'a Deployment with unready pods is InProgress LessReady',
    patched('deployment', { status: { readyReplicas: 1 } }),
    'InProgress',
    'LessReady',
    'Ready: 1/3',
  ],
  [
    'a Deployment still progressing is InProgress ReplicaSetNotAvailable',
    patched('deployment', {
      status: { conditions: [cond('Available', 'True'), cond('Progressing', 'True', 'ReplicaSetUpdated')] },
    }),
    'InProgress',
    'ReplicaSetNotAvailable',
    'ReplicaSet not Available',
  ],
  [
    'a Deployment without Available=True is InProgress DeploymentNotAvailable',
    patched('deployment', {
      status: {
        conditions: [
          cond('Available', 'False', 'MinimumReplicasUnavailable'),
          cond('Progressing', 'True', 'NewReplicaSetAvailable'),
        ],
      },
    }),
    'InProgress',
    'DeploymentNotAvailable',
    'Deployment not Available',
  ],
  [
    'a Deployment with no progress deadline needs only Available',
    patched('deployment', {
      spec: { progressDeadlineSeconds: null },
      status: { conditions: [cond('Available', 'True')] },
    }),
    'Current',
    undefined,
    'Deployment is available. Replicas: 3',
  ],
  [
    'a Deployment whose deadline is MaxInt32 counts as having none',
    patched('deployment', {
      spec: { progressDeadlineSeconds: 2147483647 },
      status: { conditions: [cond('Available', 'True')] },
    }),
    'Current',
    undefined,
    'Deployment is available. Replicas: 3',
  ],
  [
    'a Deployment scaled to zero is Current',
    patched('deployment', {
      spec: { replicas: 0 },
      status: { replicas: 0, updatedReplicas: 0, readyReplicas: 0, availableReplicas: 0 },
    }),
    'Current',
    undefined,
    'Deployment is available. Replicas: 0',
  ],
  [
    'a Deployment without spec.replicas wants one replica',
    patched('deployment', { spec: { replicas: null }, status: { replicas: 0 } }),
    'InProgress',
    'LessReplicas',
    'Replicas: 0/1',
  ],
  [
    'a Deployment with fractional spec.replicas reads the default of one',
    patched('deployment', {
      spec: { replicas: 2.5 },
      status: { replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
    }),
    'Current',
    undefined,
    'Deployment is available. Replicas: 1',
  ],
  [
    'a Deployment with string counts reads them as zero',
    patched('deployment', { status: { replicas: '3' } }),
    'InProgress',
    'LessReplicas',
    'Replicas: 0/3',
  ],
  [
    'an extensions/v1beta1 Deployment uses the same rule',
    patched('deployment', { apiVersion: 'extensions/v1beta1', status: { readyReplicas: 0 } }),
    'InProgress',
    'LessReady',
    'Ready: 0/3',
  ],
  [
    'a Deployment custom resource in another group gets the generic path',
    patched('deployment', { apiVersion: 'example.com/v1', status: { readyReplicas: 0 } }),
    'Current',
    undefined,
    'Resource is current',
  ],
];

const statefulSetRows: Row[] = [
  [
    'a StatefulSet with a completed partition rollout is Current',
    fixture('statefulset'),
    'Current',
    undefined,
    'Partition rollout complete. updated: 3',
  ],
  [
    'a StatefulSet mid partition rollout is InProgress PartitionRollout',
    patched('statefulset', {
      spec: { updateStrategy: { rollingUpdate: { partition: 1 } } },
      status: { updatedReplicas: 1 },
    }),
    'InProgress',
    'PartitionRollout',
    'updated: 1/2',
  ],
  [
    'a StatefulSet with OnDelete updates is always Current',
    patched('statefulset', {
      spec: { updateStrategy: { type: 'OnDelete', rollingUpdate: null } },
      status: { readyReplicas: 0 },
    }),
    'Current',
    undefined,
    'StatefulSet is using the ondelete update strategy',
  ],
  [
    'a StatefulSet missing replicas is InProgress LessReplicas',
    patched('statefulset', { status: { replicas: 1 } }),
    'InProgress',
    'LessReplicas',
    'Replicas: 1/3',
  ],
  [
    'a StatefulSet with unready pods is InProgress LessReady',
    patched('statefulset', { status: { readyReplicas: 2 } }),
    'InProgress',
    'LessReady',
    'Ready: 2/3',
  ],
  [
    'a StatefulSet scaling down is InProgress ExtraPods',
    patched('statefulset', { spec: { replicas: 1 } }),
    'InProgress',
    'ExtraPods',
    'Pending termination: 2',
  ],
  [
    'a StatefulSet without partition and old pods is InProgress LessCurrent',
    patched('statefulset', { spec: { updateStrategy: { rollingUpdate: null } }, status: { currentReplicas: 1 } }),
    'InProgress',
    'LessCurrent',
    'current: 1/3',
  ],
  [
    'a StatefulSet without partition and differing revisions is InProgress RevisionMismatch',
    patched('statefulset', { spec: { updateStrategy: { rollingUpdate: null } }, status: { updateRevision: 'db-6a' } }),
    'InProgress',
    'RevisionMismatch',
    'Waiting for updated revision to match current',
  ],
  [
    'a StatefulSet without partition and matching revisions is Current',
    patched('statefulset', { spec: { updateStrategy: { rollingUpdate: null } } }),
    'Current',
    undefined,
    'All replicas scheduled as expected. Replicas: 3',
  ],
  [
    'an apps/v1beta1-less extensions StatefulSet has no rule',
    patched('statefulset', { apiVersion: 'extensions/v1beta1', status: { readyReplicas: 0 } }),
    'Current',
    undefined,
    'Resource is current',
  ],
];

const daemonSetRows: Row[] = [
  [
    'a DaemonSet on every node is Current',
    fixture('daemonset'),
    'Current',
    undefined,
    'All replicas scheduled as expected. Replicas: 5',
  ],
  [
    'a DaemonSet without metadata.generation is InProgress NoGeneration',
    patched('daemonset', { metadata: { generation: null } }),
    'InProgress',
    'NoGeneration',
    'DaemonSet metadata.generation not found',
  ],
  [
    'a DaemonSet not yet observed is InProgress NoObservedGeneration',
    patched('daemonset', { status: { observedGeneration: null } }),
    'InProgress',
    'NoObservedGeneration',
    'DaemonSet status.observedGeneration not found',
  ],
  [
    'a DaemonSet without desiredNumberScheduled is InProgress NoDesiredNumber',
    patched('daemonset', { status: { desiredNumberScheduled: null } }),
    'InProgress',
    'NoDesiredNumber',
    'Missing .status.desiredNumberScheduled',
  ],
  [
    'a DaemonSet not scheduled everywhere is InProgress LessCurrent',
    patched('daemonset', { status: { currentNumberScheduled: 4 } }),
    'InProgress',
    'LessCurrent',
    'Current: 4/5',
  ],
  [
    'a DaemonSet mid update is InProgress LessUpdated',
    patched('daemonset', { status: { updatedNumberScheduled: 2 } }),
    'InProgress',
    'LessUpdated',
    'Updated: 2/5',
  ],
  [
    'a DaemonSet with unavailable pods is InProgress LessAvailable',
    patched('daemonset', { status: { numberAvailable: 3 } }),
    'InProgress',
    'LessAvailable',
    'Available: 3/5',
  ],
  [
    'a DaemonSet with unready pods is InProgress LessReady',
    patched('daemonset', { status: { numberReady: 4 } }),
    'InProgress',
    'LessReady',
    'Ready: 4/5',
  ],
  [
    'a DaemonSet on no nodes is Current',
    patched('daemonset', {
      status: {
        desiredNumberScheduled: 0,
        currentNumberScheduled: 0,
        updatedNumberScheduled: 0,
        numberAvailable: 0,
        numberReady: 0,
      },
    }),
    'Current',
    undefined,
    'All replicas scheduled as expected. Replicas: 0',
  ],
  [
    'an extensions DaemonSet uses the same rule',
    patched('daemonset', { apiVersion: 'extensions/v1beta1', status: { numberReady: 1 } }),
    'InProgress',
    'LessReady',
    'Ready: 1/5',
  ],
];

const replicaSetRows: Row[] = [
  ['a full ReplicaSet is Current', fixture('replicaset'), 'Current', undefined, 'ReplicaSet is available. Replicas: 3'],
  [
    'a ReplicaSet with ReplicaFailure is InProgress, not Failed',
    patched('replicaset', {
      status: {
        conditions: [cond('ReplicaFailure', 'True', 'FailedCreate', 'pods "web-" is forbidden: exceeded quota')],
      },
    }),
    'InProgress',
    'ReplicaFailure',
    'Replica Failure condition. Check Pods',
  ],
  [
    'a ReplicaSet with ReplicaFailure=False is judged by its counts',
    patched('replicaset', { status: { conditions: [cond('ReplicaFailure', 'False')] } }),
    'Current',
    undefined,
    'ReplicaSet is available. Replicas: 3',
  ],
  [
    'a ReplicaSet with mislabelled pods is InProgress LessLabelled',
    patched('replicaset', { status: { fullyLabeledReplicas: 2 } }),
    'InProgress',
    'LessLabelled',
    'Labelled: 2/3',
  ],
  [
    'a ReplicaSet with unavailable pods is InProgress LessAvailable',
    patched('replicaset', { status: { availableReplicas: 1 } }),
    'InProgress',
    'LessAvailable',
    'Available: 1/3',
  ],
  [
    'a ReplicaSet with unready pods is InProgress LessReady',
    patched('replicaset', { status: { readyReplicas: 2 } }),
    'InProgress',
    'LessReady',
    'Ready: 2/3',
  ],
  [
    'a ReplicaSet scaling down is InProgress ExtraPods',
    patched('replicaset', { status: { replicas: 5 } }),
    'InProgress',
    'ExtraPods',
    'Pending termination: 2',
  ],
];

const podRows: Row[] = [
  ['a running ready Pod is Current', fixture('pod'), 'Current', undefined, 'Pod is Ready'],
  [
    'a succeeded Pod is Current',
    patched('pod', { status: { phase: 'Succeeded' } }),
    'Current',
    undefined,
    'Pod has completed successfully',
  ],
  [
    'a failed Pod is Current because it has finished',
    patched('pod', { status: { phase: 'Failed' } }),
    'Current',
    undefined,
    'Pod has completed, but not successfully',
  ],
  [
    'a running unready Pod is InProgress PodRunningNotReady',
    patched('pod', { status: { conditions: [cond('Ready', 'False', 'ContainersNotReady')] } }),
    'InProgress',
    'PodRunningNotReady',
    'Pod is running but is not Ready',
  ],
  [
    'a Pod with crash-looping containers is Failed, names joined by commas',
    patched('pod', {
      status: {
        conditions: [cond('Ready', 'False')],
        containerStatuses: [
          { name: 'web', state: { waiting: { reason: 'CrashLoopBackOff' } } },
          { name: 'sidecar', state: { running: {} } },
          { name: 'proxy', state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      },
    }),
    'Failed',
    'ContainerCrashLooping',
    'Containers in CrashLoop state: web,proxy',
  ],
  [
    'a ready Pod is Current even with a crash-looping container',
    patched('pod', {
      status: { containerStatuses: [{ name: 'web', state: { waiting: { reason: 'CrashLoopBackOff' } } }] },
    }),
    'Current',
    undefined,
    'Pod is Ready',
  ],
  [
    'a Pod with an image pull backoff is only InProgress',
    patched('pod', {
      status: {
        conditions: [cond('Ready', 'False')],
        containerStatuses: [{ name: 'web', state: { waiting: { reason: 'ImagePullBackOff' } } }],
      },
    }),
    'InProgress',
    'PodRunningNotReady',
    'Pod is running but is not Ready',
  ],
  [
    'crash-looping init containers are not inspected',
    patched('pod', {
      status: {
        conditions: [cond('Ready', 'False')],
        containerStatuses: [],
        initContainerStatuses: [{ name: 'init', state: { waiting: { reason: 'CrashLoopBackOff' } } }],
      },
    }),
    'InProgress',
    'PodRunningNotReady',
    'Pod is running but is not Ready',
  ],
  [
    'container entries without a name or state are skipped',
    patched('pod', {
      status: {
        conditions: [],
        containerStatuses: [
          { state: { waiting: { reason: 'CrashLoopBackOff' } } },
          { name: 'web' },
          { name: 'web', state: {} },
          { name: 'web', state: { waiting: {} } },
        ],
      },
    }),
    'InProgress',
    'PodRunningNotReady',
    'Pod is running but is not Ready',
  ],
  [
    'a pending Pod is InProgress PodPending',
    patched('pod', { status: { phase: 'Pending', conditions: [cond('PodScheduled', 'True')] } }),
    'InProgress',
    'PodPending',
    'Pod is in the Pending phase',
  ],
  [
    'a Pod unschedulable for 10 s is InProgress PodNotScheduled',
    patched('pod', {
      metadata: { creationTimestamp: '2026-03-01T11:59:50Z' },
      status: {
        phase: 'Pending',
        conditions: [cond('PodScheduled', 'False', 'Unschedulable', '0/3 nodes are available')],
      },
    }),
    'InProgress',
    'PodNotScheduled',
    'Pod has not been scheduled',
  ],
  [
    'a Pod unschedulable for exactly 15 s is Failed PodUnschedulable',
    patched('pod', {
      metadata: { creationTimestamp: '2026-03-01T11:59:45Z' },
      status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable')] },
    }),
    'Failed',
    'PodUnschedulable',
    'Pod could not be scheduled',
  ],
  [
    'a Pod unschedulable for hours is Failed PodUnschedulable',
    patched('pod', { status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable')] } }),
    'Failed',
    'PodUnschedulable',
    'Pod could not be scheduled',
  ],
  [
    'an unschedulable Pod without a creation time is Failed at once',
    patched('pod', {
      metadata: { creationTimestamp: null },
      status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable')] },
    }),
    'Failed',
    'PodUnschedulable',
    'Pod could not be scheduled',
  ],
  [
    'an unschedulable Pod with an unparsable creation time is Failed at once',
    patched('pod', {
      metadata: { creationTimestamp: 'yesterday' },
      status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'Unschedulable')] },
    }),
    'Failed',
    'PodUnschedulable',
    'Pod could not be scheduled',
  ],
  [
    'a Pod not scheduled for another reason is InProgress PodPending',
    patched('pod', { status: { phase: 'Pending', conditions: [cond('PodScheduled', 'False', 'SchedulingGated')] } }),
    'InProgress',
    'PodPending',
    'Pod is in the Pending phase',
  ],
  [
    'a Pod without a phase is InProgress PodNotObserved',
    patched('pod', { status: { phase: null } }),
    'InProgress',
    'PodNotObserved',
    'Pod phase not available',
  ],
];

const otherRows: Row[] = [
  ['a bound PVC is Current', fixture('pvc'), 'Current', undefined, 'PVC is Bound'],
  [
    'a pending PVC is InProgress NotBound',
    patched('pvc', { status: { phase: 'Pending' } }),
    'InProgress',
    'NotBound',
    'PVC is not Bound. phase: Pending',
  ],
  [
    'a lost PVC is InProgress NotBound',
    patched('pvc', { status: { phase: 'Lost' } }),
    'InProgress',
    'NotBound',
    'PVC is not Bound. phase: Lost',
  ],
  ['a ClusterIP Service is Current', fixture('service'), 'Current', undefined, 'Service is ready'],
  [
    'a headless Service is Current',
    patched('service', { spec: { clusterIP: 'None' } }),
    'Current',
    undefined,
    'Service is ready',
  ],
  [
    'a LoadBalancer Service without a cluster IP is InProgress NoIPAssigned',
    patched('service', { spec: { type: 'LoadBalancer', clusterIP: null } }),
    'InProgress',
    'NoIPAssigned',
    'ClusterIP not set. Service type: LoadBalancer',
  ],
  [
    'a LoadBalancer Service waiting for an external IP is already Current',
    patched('service', { spec: { type: 'LoadBalancer' } }),
    'Current',
    undefined,
    'Service is ready',
  ],
  ['a completed Job is Current', fixture('job'), 'Current', undefined, 'Job Completed. succeeded: 1/1'],
  [
    'a failed Job is Failed JobFailed',
    patched('job', {
      spec: { completions: 3 },
      status: {
        succeeded: 0,
        failed: 7,
        conditions: [cond('FailureTarget', 'True'), cond('Failed', 'True', 'BackoffLimitExceeded')],
      },
    }),
    'Failed',
    'JobFailed',
    'Job Failed. failed: 7/3',
  ],
  [
    'a running Job is Current in upstream kstatus',
    patched('job', { status: { succeeded: 0, active: 1, conditions: null } }),
    'Current',
    undefined,
    'Job in progress. success:0, active: 1, failed: 0',
  ],
  [
    'a Job without completions counts parallelism',
    patched('job', { spec: { completions: null, parallelism: 4 } }),
    'Current',
    undefined,
    'Job Completed. succeeded: 1/4',
  ],
  [
    'a suspended Job is Current',
    patched('job', {
      spec: { suspend: true },
      status: { startTime: null, succeeded: 0, conditions: [cond('Suspended', 'True', 'JobSuspended')] },
    }),
    'Current',
    undefined,
    'Job is suspended',
  ],
  [
    'a Job resumed while still marked Suspended waits to start',
    patched('job', {
      spec: { suspend: false },
      status: { startTime: null, succeeded: 0, conditions: [cond('Suspended', 'True', 'JobSuspended')] },
    }),
    'InProgress',
    'JobNotStarted',
    'Job not started',
  ],
  [
    'a Job without a start time is InProgress JobNotStarted',
    patched('job', { status: { startTime: null, conditions: null } }),
    'InProgress',
    'JobNotStarted',
    'Job not started',
  ],
  ['a CronJob is always Current', fixture('cronjob'), 'Current', undefined, 'Resource is always ready'],
  [
    'a PodDisruptionBudget is Current once observed',
    fixture('pdb'),
    'Current',
    undefined,
    'AllowedDisruptions has been computed.',
  ],
  ['an established CRD is Current', fixture('crd'), 'Current', undefined, 'CRD is established'],
  [
    'a CRD with conflicting names is Failed with its condition',
    patched('crd', {
      status: { conditions: [cond('NamesAccepted', 'False', 'PluralConflict', '"widgets" is already in use')] },
    }),
    'Failed',
    'PluralConflict',
    '"widgets" is already in use',
  ],
  [
    'a CRD not established for another reason is Failed',
    patched('crd', {
      status: { conditions: [cond('Established', 'False', 'NotAccepted', 'not all names are accepted')] },
    }),
    'Failed',
    'NotAccepted',
    'not all names are accepted',
  ],
  [
    'a CRD still installing is InProgress Installing',
    patched('crd', {
      status: { conditions: [cond('Established', 'False', 'Installing', 'the initial names have been accepted')] },
    }),
    'InProgress',
    'Installing',
    'Install in progress',
  ],
  ['a ConfigMap is always Current', fixture('configmap'), 'Current', undefined, 'Resource is always ready'],
  ['a Secret is always Current', fixture('secret'), 'Current', undefined, 'Resource is always ready'],
  ['a Namespace has no rule and is Current', fixture('namespace'), 'Current', undefined, 'Resource is current'],
];

describe.each([
  ['Deployment', deploymentRows],
  ['StatefulSet', statefulSetRows],
  ['DaemonSet', daemonSetRows],
  ['ReplicaSet', replicaSetRows],
  ['Pod', podRows],
  ['PVC, Service, Job, CronJob, PDB, CRD, ConfigMap, Secret', otherRows],
])('%s rule', (_kind, rows) => {
  it.each(rows)('%s', (_behaviour, object, status, reason, message) => {
    check(object, status, reason, message);
  });
});

describe('real-shaped fixtures', () => {
  const names: ObjectName[] = [
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
  it.each(names)('the healthy %s fixture is Current', (name) => {
    expect(computeStatus(fixture(name), { now: NOW }).status).toBe('Current');
  });
});
