/**
 * The "who am I / may I" APIs kubectl calls: `kubectl auth can-i` (authorization.k8s.io/v1
 * SelfSubjectAccessReview) and `kubectl auth whoami` (authentication.k8s.io/v1 SelfSubjectReview).
 * They are create-only and store nothing, as on the apiserver. Without `rbac: true` the emulator
 * has no RBAC: whoever gets past its one optional bearer token may do everything, and the answers
 * say so. With it, a service-account token's reviews answer from the stored RBAC objects.
 */
import type { ServerResponse } from 'node:http';
import { makeFailure, type ApiFailure } from './api-status.ts';
import { sendFailure, sendJson } from './http-io.ts';
import { decodeProtobufObject, isProtobufContentType, ProtobufBodyError } from './protobuf.ts';
import type { ResourceRequest } from './request-info.ts';
import type { Reviewer } from './rbac.ts';
import type { KubeObject } from './types.ts';

const REVIEWS: Record<
  string,
  { kind: string; answer: (body: KubeObject, reviewer: Reviewer | undefined) => Record<string, unknown> }
> = {
  'authorization.k8s.io/v1/selfsubjectaccessreviews': {
    kind: 'SelfSubjectAccessReview',
    answer: (body, reviewer) => {
      if (reviewer === undefined)
        return { allowed: true, reason: 'the phaselog emulator has no RBAC: every authenticated request is allowed' };
      const spec = (body['spec'] ?? {}) as { resourceAttributes?: Parameters<Reviewer['can']>[0] };
      const allowed = spec.resourceAttributes !== undefined && reviewer.can(spec.resourceAttributes);
      return allowed ? { allowed: true, reason: 'allowed by the stored RBAC objects' } : { allowed: false };
    },
  },
  'authentication.k8s.io/v1/selfsubjectreviews': {
    kind: 'SelfSubjectReview',
    answer: (_body, reviewer) => ({
      userInfo:
        reviewer === undefined
          ? { username: 'emulator-user', groups: ['system:masters', 'system:authenticated'] }
          : { username: reviewer.user, groups: reviewer.groups },
    }),
  },
};

/** Whether a request targets one of the review APIs (they are not stored kinds). */
export function isReviewRequest(info: ResourceRequest): boolean {
  return (
    `${info.group}/${info.version}/${info.plural}` in REVIEWS && info.namespace === undefined && info.name === undefined
  );
}

type Parsed = { ok: true; object: KubeObject } | { ok: false; failure: ApiFailure };

function parseBody(body: Buffer, contentType: string): Parsed {
  try {
    if (isProtobufContentType(contentType)) return { ok: true, object: decodeProtobufObject(body) };
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return { ok: false, failure: makeFailure(400, 'the body of the request must be a JSON object') };
    return { ok: true, object: parsed as KubeObject };
  } catch (e) {
    if (e instanceof ProtobufBodyError)
      return {
        ok: false,
        failure: makeFailure(
          415,
          `the body of the request could not be decoded from protobuf: ${e.message}`,
          undefined,
          'UnsupportedMediaType',
        ),
      };
    return {
      ok: false,
      failure: makeFailure(400, `the body of the request was in an unknown format: ${(e as Error).message}`),
    };
  }
}

/** Answers a review: POST only; the request's spec comes back with the status filled in. */
export function handleReview(
  info: ResourceRequest,
  body: Buffer,
  contentType: string,
  res: ServerResponse,
  reviewer?: Reviewer,
): number {
  const review = REVIEWS[`${info.group}/${info.version}/${info.plural}`];
  const fail = (f: ApiFailure): number => {
    sendFailure(res, f);
    return f.code;
  };
  if (!review) return fail(makeFailure(404, 'the server could not find the requested resource'));
  if (info.verb !== 'create')
    return fail(
      makeFailure(
        405,
        'the server does not allow this method on the requested resource',
        undefined,
        'MethodNotAllowed',
      ),
    );
  const parsed = parseBody(body, contentType);
  if (!parsed.ok) return fail(parsed.failure);
  const obj = parsed.object;
  sendJson(res, 201, {
    apiVersion: `${info.group}/${info.version}`,
    kind: review.kind,
    metadata: { creationTimestamp: null },
    ...('spec' in obj ? { spec: obj['spec'] } : {}),
    status: review.answer(obj, reviewer),
  });
  return 201;
}
