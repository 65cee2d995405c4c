/**
 * Fans one tick out over many clusters. Each cluster is read independently; a cluster that fails
 * in any way becomes a result with `clusterError`, and the others carry on.
 */
import type { ObjectRef } from '../inventory/types.ts';
import type { ClusterClient } from './cluster-client.ts';
import { classifyKubeError } from './errors.ts';
import { readObjects, type ReadObjectsOptions, type ReadObjectsResult } from './read-objects.ts';

/** The refs to read in one cluster. */
export interface ClusterReadRequest {
  cluster: ClusterClient;
  refs: readonly ObjectRef[];
}

/** Reads every cluster in parallel; results are keyed by cluster name. Never throws. */
export async function readClusters(
  requests: readonly ClusterReadRequest[],
  options: ReadObjectsOptions = {},
): Promise<Map<string, ReadObjectsResult>> {
  const settled = await Promise.allSettled(requests.map((r) => readObjects(r.cluster, r.refs, options)));
  const results = new Map<string, ReadObjectsResult>();
  settled.forEach((outcome, index) => {
    const request = requests[index];
    if (request === undefined) return;
    if (outcome.status === 'fulfilled') {
      results.set(request.cluster.name, outcome.value);
      return;
    }
    // readObjects reports failures as data; this only catches a defect, still as data.
    const error = classifyKubeError(outcome.reason);
    results.set(request.cluster.name, {
      objects: new Map(),
      records: new Map(),
      missing: [],
      errors: [{ group: '', kind: '*', error, refs: [...request.refs] }],
      clusterError: error,
      pods: [],
      stats: { listRequests: 0, cacheReads: 0 },
    });
  });
  return results;
}
