/**
 * The `/scale` subresource (autoscaling/v1 Scale) of Deployments, StatefulSets, ReplicaSets and
 * CRDs that declare one: reading it, and writing `spec.replicas` through it (`kubectl scale`).
 */
import type { ServerResponse } from 'node:http';
import { makeBadRequest, makeFailure, makeNotFound } from './api-status.ts';
import type { ResourceType } from './catalog.ts';
import type { ClusterState } from './cluster-state.ts';
import { sendFailure, sendJson } from './http-io.ts';
import { readMeta } from './object-store.ts';
import { applyJsonPatch, applyMergePatch } from './patch.ts';
import type { ResourceRequest } from './request-info.ts';
import type { KubeObject } from './types.ts';

function readPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function writePath(obj: KubeObject, path: string, value: unknown): KubeObject {
  const [head, ...rest] = path.split('.');
  if (head === undefined) return obj;
  const child = obj[head];
  const next =
    rest.length === 0
      ? value
      : writePath(
          typeof child === 'object' && child !== null ? { ...(child as KubeObject) } : {},
          rest.join('.'),
          value,
        );
  return { ...obj, [head]: next };
}

function selectorText(obj: KubeObject): string {
  const labels = readPath(obj, 'spec.selector.matchLabels');
  if (typeof labels !== 'object' || labels === null) return '';
  return Object.entries(labels as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

function buildScale(type: ResourceType, obj: KubeObject): KubeObject {
  const meta = readMeta(obj);
  const scale = type.scale as NonNullable<ResourceType['scale']>;
  const spec = readPath(obj, scale.specReplicasPath);
  const status = readPath(obj, scale.statusReplicasPath);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: meta['name'],
      namespace: meta['namespace'],
      uid: meta['uid'],
      resourceVersion: meta['resourceVersion'],
      creationTimestamp: meta['creationTimestamp'],
    },
    spec: { replicas: typeof spec === 'number' ? spec : 0 },
    status: { replicas: typeof status === 'number' ? status : 0, selector: selectorText(obj) },
  };
}

/** What the scale handler takes from a request: the target and, for PUT and PATCH, the body. */
export interface ScaleInput {
  type: ResourceType;
  info: ResourceRequest;
  body: string;
  contentType: string;
}

/** Serves GET/PUT/PATCH on `<object>/scale`; returns the HTTP status sent. */
export function handleScale(state: ClusterState, input: ScaleInput, res: ServerResponse): number {
  const { type, info, body, contentType } = input;
  const fail = (f: ReturnType<typeof makeFailure>): number => {
    sendFailure(res, f);
    return f.code;
  };
  if (!type.scale) return fail(makeFailure(404, 'the server could not find the requested resource'));
  const name = info.name ?? '';
  const namespace = info.namespace ?? '';
  const current = state.get(type, namespace, name);
  if (!current) return fail(makeNotFound(type.group, type.plural, name));
  const scale = buildScale(type, current);
  if (info.verb === 'get') {
    sendJson(res, 200, scale);
    return 200;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return fail(makeBadRequest('the body of the request was in an unknown format'));
  }
  let next: unknown = parsed;
  if (info.verb === 'patch') {
    const media = contentType.split(';')[0]?.trim();
    if (media === 'application/json-patch+json') {
      const r = applyJsonPatch(scale as Parameters<typeof applyJsonPatch>[0], parsed);
      if (!r.ok) return fail(makeFailure(422, r.message, undefined, 'Invalid'));
      next = r.value;
    } else {
      next = applyMergePatch(scale, parsed);
    }
  } else if (info.verb !== 'update') {
    return fail(makeFailure(405, 'the server does not allow this method on the requested resource'));
  }
  const replicas = readPath(next, 'spec.replicas');
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    return fail(
      makeFailure(
        422,
        `Scale.autoscaling "${name}" is invalid: spec.replicas: Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
        undefined,
        'Invalid',
      ),
    );
  }
  const rv = readPath(next, 'metadata.resourceVersion');
  const updated = writePath(
    {
      ...current,
      metadata: {
        ...readMeta(current),
        resourceVersion: typeof rv === 'string' && rv !== '' ? rv : readMeta(current)['resourceVersion'],
      },
    },
    type.scale.specReplicasPath,
    replicas,
  );
  const result = state.update(type, namespace, name, updated);
  if (!result.ok) return fail(result.failure);
  sendJson(res, 200, buildScale(type, result.object));
  return 200;
}
