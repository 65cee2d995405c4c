/**
 * The live `status` block of a few objects of one cluster, for `Resource.liveStatus`: one GET per
 * object (discovery is cached), a few at a time, each cut off at the deadline. Only the object's
 * `status` leaves this module: never its `spec`, nor a Secret's `data` or `stringData`.
 */
import type { ClusterClient } from './cluster-client.ts';
import { collectionPath, isKubeError } from './discovery.ts';
import { classifyKubeError, type KubeErrorKind } from './errors.ts';

/** One object to read. `namespace` is `''` for cluster-scoped objects. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** Why an object's live status is not given: the object is gone, too big, or its read failed. */
export type LiveStatusMiss = 'NOT_FOUND' | 'TOO_LARGE' | KubeErrorKind;

/** An object's `status` block as read now (`{}` when it has none), or why it is not given. */
export type LiveStatusRead = { ok: true; status: Record<string, unknown> } | { ok: false; reason: LiveStatusMiss };

/** Largest status block returned, as JSON (a custom resource may keep a lot there). */
export const MAX_STATUS_BYTES = 64 * 1024;

/** Options of {@link readLiveStatuses}. */
export interface ReadLiveStatusOptions {
  /** Longest time for all the reads. */
  timeoutMs: number;
  /** GETs in flight at once. @default 8 */
  concurrency?: number;
}

/** Reads the `status` of each ref, in order; failures are data. */
export async function readLiveStatuses(
  client: ClusterClient,
  refs: readonly ObjectRef[],
  options: ReadLiveStatusOptions,
): Promise<LiveStatusRead[]> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const out: LiveStatusRead[] = new Array<LiveStatusRead>(refs.length);
  let next = 0;
  const run = async (): Promise<void> => {
    for (let i = next++; i < refs.length; i = next++) out[i] = await readOne(client, refs[i] as ObjectRef, signal);
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, refs.length) }, run));
  return out;
}

async function readOne(client: ClusterClient, ref: ObjectRef, signal: AbortSignal): Promise<LiveStatusRead> {
  if (signal.aborted) return { ok: false, reason: 'TIMEOUT' };
  const resolved = await client.discovery.resolve(ref.group, ref.kind);
  if (isKubeError(resolved)) return { ok: false, reason: resolved.kind };
  const path = `${collectionPath(resolved, ref.namespace)}/${encodeURIComponent(ref.name)}`;
  let object: unknown;
  try {
    object = await client.transport.getJson(path, {}, { signal });
  } catch (err) {
    const error = classifyKubeError(err);
    // The kind was resolved: a 404 here is the object, not the kind.
    if (error.statusCode === 404) return { ok: false, reason: 'NOT_FOUND' };
    return { ok: false, reason: signal.aborted ? 'TIMEOUT' : error.kind };
  }
  const status = isRecord(object) && isRecord(object.status) ? object.status : {};
  if (Buffer.byteLength(JSON.stringify(status), 'utf8') > MAX_STATUS_BYTES) return { ok: false, reason: 'TOO_LARGE' };
  return { ok: true, status };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
