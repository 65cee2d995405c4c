/**
 * POST, PUT, PATCH, DELETE and DELETE-collection over HTTP, translated into ClusterState writes.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { makeBadRequest, makeFailure, makeNotFound, type ApiFailure } from './api-status.ts';
import { formatApiVersion, type ResourceType } from './catalog.ts';
import type { ClusterState, DeleteOptions, WriteResult } from './cluster-state.ts';
import { sendFailure, sendJson } from './http-io.ts';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.ts';
import { decodeProtobufObject, isProtobufContentType, ProtobufBodyError } from './protobuf.ts';
import { presentListItem, presentObject } from './present.ts';
import { selectPage } from './read-handlers.ts';
import type { ResourceRequest } from './request-info.ts';
import type { KubeObject } from './types.ts';

/** What a write handler needs from the request. */
export interface WriteInput {
  type: ResourceType;
  info: ResourceRequest;
  params: URLSearchParams;
  body: string;
  /** The body as received; protobuf bodies are binary. */
  rawBody: Buffer;
  contentType: string;
  /** `dryRun=All`: answer as if written, change nothing. */
  dryRun: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseJsonBody(text: string): unknown | ApiFailure {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    return makeBadRequest(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (${(e as Error).message})`,
    );
  }
}

function isFailure(v: unknown): v is ApiFailure {
  return (
    isObject(v) && 'body' in v && typeof v['code'] === 'number' && isObject(v['body']) && v['body']['kind'] === 'Status'
  );
}

function readObjectBody(input: WriteInput): KubeObject | ApiFailure {
  const mediaType = input.contentType.split(';')[0]?.trim() ?? '';
  let parsed: unknown;
  if (mediaType === 'application/yaml') {
    try {
      parsed = parseYaml(input.body);
    } catch (e) {
      return makeBadRequest(`error decoding YAML: ${(e as Error).message}`);
    }
  } else if (mediaType === 'application/json' || mediaType === '') {
    parsed = parseJsonBody(input.body);
    if (isFailure(parsed)) return parsed;
  } else if (isProtobufContentType(mediaType) && !input.type.custom) {
    try {
      parsed = decodeProtobufObject(input.rawBody);
    } catch (e) {
      if (e instanceof ProtobufBodyError)
        return makeFailure(
          415,
          `the body of the request could not be decoded from protobuf: ${e.message}`,
          undefined,
          'UnsupportedMediaType',
        );
      throw e;
    }
  } else {
    // Custom resources have no protobuf encoding; the apiserver answers them this way too.
    return makeFailure(
      415,
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
    );
  }
  if (!isObject(parsed)) return makeBadRequest('the body of the request must be a JSON object');
  return checkKind(input.type, parsed as KubeObject);
}

function checkKind(type: ResourceType, obj: KubeObject): KubeObject | ApiFailure {
  if (obj.kind !== undefined && obj.kind !== type.kind) {
    return makeBadRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${formatApiVersion(type.group, type.versions[0] ?? 'v1')})`,
    );
  }
  return obj;
}

function answer(res: ServerResponse, type: ResourceType, version: string, result: WriteResult): number {
  if (!result.ok) {
    sendFailure(res, result.failure);
    return result.failure.code;
  }
  sendJson(res, result.code, presentObject(type, result.object, version));
  return result.code;
}

function namespaceOf(input: WriteInput): string {
  return input.info.namespace ?? '';
}

/**
 * POST on a collection. `onTokenMinted` hears of each service-account token TokenRequest issues
 * (with `rbac: true` those tokens authenticate).
 */
export function handleCreate(
  state: ClusterState,
  input: WriteInput,
  res: ServerResponse,
  onTokenMinted?: (token: string, sa: { namespace: string; name: string }) => void,
): number {
  if (
    input.info.subresource === 'token' &&
    input.type.group === '' &&
    input.type.kind === 'ServiceAccount' &&
    input.info.name !== undefined
  ) {
    return handleTokenRequest(state, input, res, onTokenMinted);
  }
  const obj = readObjectBody(input);
  if (isFailure(obj)) return fail(res, obj);
  if (input.info.subresource !== undefined || input.info.name !== undefined)
    return fail(res, makeFailure(405, 'the server does not allow this method on the requested resource'));
  return answer(
    res,
    input.type,
    input.info.version,
    state.create(input.type, namespaceOf(input), obj, { dryRun: input.dryRun }),
  );
}

const TOKEN_TYPE: ResourceType = {
  group: 'authentication.k8s.io',
  versions: ['v1'],
  kind: 'TokenRequest',
  plural: 'tokenrequests',
  singular: 'tokenrequest',
  namespaced: true,
  shortNames: [],
  categories: [],
  hasStatus: false,
  hasGeneration: false,
  fieldPaths: [],
  custom: false,
};

/**
 * POST serviceaccounts/<name>/token (`kubectl create token`): answers a TokenRequest with a token
 * and its expiry, as the apiserver's TokenRequest API does. The token is an opaque random string,
 * not a signed JWT. Without `rbac: true` it authenticates nothing (the emulator's one optional
 * bearer token does); with it, it acts as the service account until the emulator closes (expiry is
 * not enforced).
 */
function handleTokenRequest(
  state: ClusterState,
  input: WriteInput,
  res: ServerResponse,
  onTokenMinted?: (token: string, sa: { namespace: string; name: string }) => void,
): number {
  const name = input.info.name ?? '';
  if (!state.get(input.type, namespaceOf(input), name)) return fail(res, makeNotFound('', 'serviceaccounts', name));
  const parsed = readObjectBody({ ...input, type: TOKEN_TYPE });
  if (isFailure(parsed)) return fail(res, parsed);
  const spec = isObject(parsed['spec']) ? parsed['spec'] : {};
  const seconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : 3600;
  if (!Number.isInteger(seconds) || seconds < 600) {
    return fail(
      res,
      makeFailure(
        422,
        `TokenRequest.authentication.k8s.io "${name}" is invalid: spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
        undefined,
        'Invalid',
      ),
    );
  }
  const expires = new Date(Date.now() + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const token = `emulated.${randomBytes(24).toString('base64url')}`;
  const answerBody = {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace: namespaceOf(input), creationTimestamp: null },
    spec: {
      audiences: Array.isArray(spec['audiences']) ? spec['audiences'] : [],
      expirationSeconds: seconds,
      boundObjectRef: spec['boundObjectRef'] ?? null,
    },
    status: { token, expirationTimestamp: expires },
  };
  if (!input.dryRun) onTokenMinted?.(token, { namespace: namespaceOf(input), name });
  sendJson(res, 201, answerBody);
  return 201;
}

function fail(res: ServerResponse, failure: ApiFailure): number {
  sendFailure(res, failure);
  return failure.code;
}

function subresourceOf(input: WriteInput): 'status' | undefined | ApiFailure {
  const sub = input.info.subresource;
  if (sub === undefined) return undefined;
  if (sub === 'status' && input.type.hasStatus) return 'status';
  return makeFailure(404, 'the server could not find the requested resource');
}

/** PUT on an object or its status. */
export function handleUpdate(state: ClusterState, input: WriteInput, res: ServerResponse): number {
  const sub = subresourceOf(input);
  if (isFailure(sub)) return fail(res, sub);
  const obj = readObjectBody(input);
  if (isFailure(obj)) return fail(res, obj);
  const mode = { ...(sub === 'status' ? { subresource: sub } : {}), dryRun: input.dryRun };
  return answer(
    res,
    input.type,
    input.info.version,
    state.update(input.type, namespaceOf(input), input.info.name ?? '', obj, mode),
  );
}

/** PATCH in any of the four flavours. */
export function handlePatch(state: ClusterState, input: WriteInput, res: ServerResponse): number {
  const sub = subresourceOf(input);
  if (isFailure(sub)) return fail(res, sub);
  const { type, info } = input;
  const name = info.name ?? '';
  const mediaType = input.contentType.split(';')[0]?.trim() ?? '';
  const current = state.get(type, namespaceOf(input), name);
  let patch: unknown;
  if (mediaType === 'application/apply-patch+yaml') {
    try {
      patch = parseYaml(input.body);
    } catch (e) {
      return fail(res, makeBadRequest(`error decoding YAML: ${(e as Error).message}`));
    }
    if (!isObject(patch)) return fail(res, makeBadRequest('the body of an apply patch must be an object'));
    if (input.params.get('fieldManager') === null)
      return fail(res, makeBadRequest('PATCH requests with application/apply-patch+yaml must supply fieldManager'));
    const checked = checkKind(type, patch as KubeObject);
    if (isFailure(checked)) return fail(res, checked);
    if (!current) {
      if (sub === 'status') return fail(res, makeNotFound(type.group, type.plural, name));
      return answer(
        res,
        type,
        info.version,
        state.create(
          type,
          namespaceOf(input),
          { ...checked, metadata: { ...(checked.metadata ?? {}), name } },
          { dryRun: input.dryRun },
        ),
      );
    }
  } else {
    patch = parseJsonBody(input.body);
    if (isFailure(patch)) return fail(res, patch);
  }
  if (!current) return fail(res, makeNotFound(type.group, type.plural, name));
  let next: unknown;
  switch (mediaType) {
    case 'application/merge-patch+json':
      next = applyMergePatch(current, patch);
      break;
    case 'application/strategic-merge-patch+json':
    case 'application/apply-patch+yaml':
      if (type.custom && mediaType === 'application/strategic-merge-patch+json') {
        return fail(
          res,
          makeFailure(
            415,
            'strategic merge patch is not supported for custom resources; use --type=merge or --type=json',
            undefined,
            'UnsupportedMediaType',
          ),
        );
      }
      next = applyStrategicMergePatch(current, patch);
      break;
    case 'application/json-patch+json': {
      const result = applyJsonPatch(current as Parameters<typeof applyJsonPatch>[0], patch);
      if (!result.ok)
        return fail(
          res,
          makeFailure(
            422,
            `the server rejected our request due to an error in our request: ${result.message}`,
            undefined,
            'Invalid',
          ),
        );
      next = result.value;
      break;
    }
    default:
      return fail(
        res,
        makeFailure(
          415,
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`,
        ),
      );
  }
  if (!isObject(next)) return fail(res, makeBadRequest('patch result is not an object'));
  const patchedMeta = isObject(next['metadata']) ? { ...next['metadata'] } : {};
  // A resourceVersion in the patch is a precondition; otherwise the patch applies to the latest object.
  const patchRv = isObject(patch) && isObject(patch['metadata']) ? patch['metadata']['resourceVersion'] : undefined;
  if (patchRv === undefined) patchedMeta['resourceVersion'] = current.metadata?.['resourceVersion'];
  const mode = { ...(sub === 'status' ? { subresource: sub } : {}), dryRun: input.dryRun };
  return answer(
    res,
    type,
    info.version,
    state.update(type, namespaceOf(input), name, { ...next, metadata: patchedMeta } as KubeObject, mode),
  );
}

function readDeleteOptions(input: WriteInput): DeleteOptions | ApiFailure {
  const opts: DeleteOptions = {};
  if (input.body.trim() !== '') {
    const parsed = parseJsonBody(input.body);
    if (isFailure(parsed)) return parsed;
    if (isObject(parsed)) {
      if (typeof parsed['propagationPolicy'] === 'string') opts.propagationPolicy = parsed['propagationPolicy'];
      if (parsed['orphanDependents'] === true) opts.propagationPolicy = 'Orphan';
      if (isObject(parsed['preconditions'])) {
        const p = parsed['preconditions'];
        opts.preconditions = {};
        if (typeof p['uid'] === 'string') opts.preconditions.uid = p['uid'];
        if (typeof p['resourceVersion'] === 'string') opts.preconditions.resourceVersion = p['resourceVersion'];
      }
    }
  }
  const q = input.params.get('propagationPolicy');
  if (q !== null) opts.propagationPolicy = q;
  if (
    opts.propagationPolicy !== undefined &&
    !['Foreground', 'Background', 'Orphan'].includes(opts.propagationPolicy)
  ) {
    return makeFailure(
      422,
      `propagationPolicy: Unsupported value: "${opts.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
      undefined,
      'Invalid',
    );
  }
  return opts;
}

/** DELETE of one object. */
export function handleDelete(state: ClusterState, input: WriteInput, res: ServerResponse): number {
  if (input.info.subresource !== undefined)
    return fail(res, makeFailure(405, 'the server does not allow this method on the requested resource'));
  const opts = readDeleteOptions(input);
  if (isFailure(opts)) return fail(res, opts);
  if (input.dryRun) opts.dryRun = true;
  return answer(
    res,
    input.type,
    input.info.version,
    state.delete(input.type, namespaceOf(input), input.info.name ?? '', opts),
  );
}

/** DELETE on a collection (honours selectors). */
export function handleDeleteCollection(state: ClusterState, input: WriteInput, res: ServerResponse): number {
  const opts = readDeleteOptions(input);
  if (isFailure(opts)) return fail(res, opts);
  if (input.dryRun) opts.dryRun = true;
  const page = selectPage(
    state,
    input.type,
    input.info,
    new URLSearchParams([...input.params].filter(([k]) => k !== 'limit' && k !== 'continue')),
  );
  if (isFailure(page)) return fail(res, page);
  const deleted: KubeObject[] = [];
  for (const obj of page.items) {
    const m = obj.metadata ?? {};
    const r = state.delete(input.type, String(m['namespace'] ?? ''), String(m['name'] ?? ''), opts);
    if (r.ok) deleted.push(presentListItem(input.type, r.object, input.info.version));
  }
  sendJson(res, 200, {
    kind: `${input.type.kind}List`,
    apiVersion: formatApiVersion(input.type.group, input.info.version),
    metadata: { resourceVersion: String(state.store.revision()) },
    items: deleted,
  });
  return 200;
}
