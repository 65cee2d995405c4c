import { readString } from '../read.ts';
import type { JsonRecord } from '../read.ts';
import { current, inProgress } from '../result.ts';
import type { StatusResult } from '../types.ts';

const TYPE = ['spec', 'type'] as const;
const CLUSTER_IP = ['spec', 'clusterIP'] as const;

/**
 * kstatus `serviceConditions` (core Service): a `LoadBalancer` Service with an empty
 * `spec.clusterIP` is InProgress `NoIPAssigned`; every other Service is Current `Service is ready`.
 * kstatus looks at the cluster IP, not at `status.loadBalancer.ingress`, so a LoadBalancer waiting
 * for its external address is already Current.
 */
export function computeServiceStatus(obj: JsonRecord): StatusResult {
  const type = readString(obj, TYPE, 'ClusterIP');
  if (type === 'LoadBalancer' && readString(obj, CLUSTER_IP, '') === '') {
    return inProgress('NoIPAssigned', 'ClusterIP not set. Service type: LoadBalancer');
  }
  return current('Service is ready');
}
