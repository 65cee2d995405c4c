/**
 * `Status` bodies for failed requests, shaped as kube-apiserver sends them
 * (k8s.io/apimachinery `pkg/api/errors`), so clients classify them by `reason` and `code`.
 */

/** The `reason` values the emulator answers with. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'Timeout'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge';

/** A failed API call as data: HTTP code plus the Status object to send. */
export interface ApiFailure {
  code: number;
  body: Record<string, unknown>;
  retryAfterSeconds?: number;
}

const REASON_BY_CODE: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** Details naming the object a failure is about. */
export interface FailureDetails {
  name?: string;
  group?: string;
  kind?: string;
  retryAfterSeconds?: number;
  causes?: { reason?: string; message: string; field?: string }[];
}

/** Builds a failure with an explicit reason (defaults to the usual reason for the code). */
export function makeFailure(
  code: number,
  message: string,
  details?: FailureDetails,
  reason?: StatusReason,
): ApiFailure {
  const body: Record<string, unknown> = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: reason ?? REASON_BY_CODE[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest'),
    code,
  };
  if (details !== undefined) body['details'] = details;
  const failure: ApiFailure = { code, body };
  if (details?.retryAfterSeconds !== undefined) failure.retryAfterSeconds = details.retryAfterSeconds;
  return failure;
}

/** `<plural>.<group>` as the apiserver names a resource in messages (`deployments.apps`, `pods`). */
export function qualifiedResource(group: string, plural: string): string {
  return group === '' ? plural : `${plural}.${group}`;
}

/** 404 for a named object. */
export function makeNotFound(group: string, plural: string, name: string): ApiFailure {
  return makeFailure(404, `${qualifiedResource(group, plural)} "${name}" not found`, { name, group, kind: plural });
}

/** 409 AlreadyExists for create. */
export function makeAlreadyExists(group: string, plural: string, name: string): ApiFailure {
  return makeFailure(
    409,
    `${qualifiedResource(group, plural)} "${name}" already exists`,
    { name, group, kind: plural },
    'AlreadyExists',
  );
}

/** 409 Conflict for a stale resourceVersion. */
export function makeConflict(group: string, plural: string, name: string): ApiFailure {
  return makeFailure(
    409,
    `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group, kind: plural },
    'Conflict',
  );
}

/** 422 Invalid with one cause. */
export function makeInvalid(group: string, kind: string, name: string, field: string, message: string): ApiFailure {
  return makeFailure(
    422,
    `${kind} "${name}" is invalid: ${field}: ${message}`,
    {
      name,
      group,
      kind,
      causes: [{ reason: 'FieldValueInvalid', message, field }],
    },
    'Invalid',
  );
}

/** 400 BadRequest. */
export function makeBadRequest(message: string): ApiFailure {
  return makeFailure(400, message);
}

/** The 410 a watch or list gets for a compacted resourceVersion. */
export function makeGone(message: string): ApiFailure {
  return makeFailure(410, message, undefined, 'Expired');
}

/** The failure a fault rule with `effect: 'status'` answers with. */
export function makeFaultFailure(code: number, group: string, plural: string, retryAfterSeconds?: number): ApiFailure {
  const what = plural === '' ? 'the server' : qualifiedResource(group, plural);
  switch (code) {
    case 401:
      return makeFailure(401, 'Unauthorized');
    case 403:
      return makeFailure(
        403,
        `${what} is forbidden: User "system:anonymous" cannot access resource "${plural}" in API group "${group}"`,
        { group, kind: plural },
      );
    case 404:
      return makeFailure(404, 'the server could not find the requested resource', { group, kind: plural });
    case 410:
      return makeGone('too old resource version');
    case 429:
      return makeFailure(429, 'Too many requests, please try again later.', {
        retryAfterSeconds: retryAfterSeconds ?? 1,
      });
    case 503:
      return makeFailure(
        503,
        'the server is currently unable to handle the request',
        retryAfterSeconds === undefined ? undefined : { retryAfterSeconds },
      );
    default:
      return makeFailure(code, code >= 500 ? 'Internal error occurred: injected fault' : 'injected fault');
  }
}
