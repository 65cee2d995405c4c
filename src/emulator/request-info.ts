/**
 * Classifies a request path the way kube-apiserver's RequestInfoFactory does
 * (k8s.io/apiserver `pkg/endpoints/request/requestinfo.go`): API prefix, group, version,
 * namespace, resource, name, subresource and verb.
 */
import type { EmulatorVerb } from './types.ts';

/** A request against a resource endpoint. */
export interface ResourceRequest {
  kind: 'resource';
  verb: EmulatorVerb;
  group: string;
  version: string;
  plural: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

/** A discovery or metadata request (`/api`, `/apis/...`, `/version`, `/openapi/...`). */
export interface DiscoveryRequest {
  kind: 'discovery';
  verb: 'discovery';
  path: string[];
}

/** Anything else (health checks, unknown paths). */
export interface OtherRequest {
  kind: 'other';
  verb: 'discovery';
  path: string[];
}

/** Any classified request. */
export type RequestInfo = ResourceRequest | DiscoveryRequest | OtherRequest;

// Namespaces have `status` and `finalize` subresources, so /namespaces/x/status is not a resource.
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isTruthyParam(v: string | null): boolean {
  return v === 'true' || v === '1';
}

/** Parses method + URL into a RequestInfo. */
export function parseRequestInfo(method: string, url: URL): RequestInfo {
  const parts = url.pathname
    .split('/')
    .filter((p) => p !== '')
    .map((p) => decodeURIComponent(p));
  const head = parts[0];
  if (head !== 'api' && head !== 'apis') {
    const discovery = head === 'version' || head === 'openapi';
    return { kind: discovery ? 'discovery' : 'other', verb: 'discovery', path: parts };
  }
  let rest: string[];
  let group: string;
  let version: string;
  if (head === 'api') {
    if (parts.length < 3) return { kind: 'discovery', verb: 'discovery', path: parts };
    group = '';
    version = parts[1] as string;
    rest = parts.slice(2);
  } else {
    if (parts.length < 4) return { kind: 'discovery', verb: 'discovery', path: parts };
    group = parts[1] as string;
    version = parts[2] as string;
    rest = parts.slice(3);
  }
  let watchPath = false;
  if (rest[0] === 'watch') {
    watchPath = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2] as string)) rest = rest.slice(2);
  }
  const plural = rest[0] ?? '';
  const name = rest[1];
  const subresource = rest[2];
  // /api/v1/namespaces/<name> addresses the Namespace itself, which has no namespace.
  if (plural === 'namespaces' && group === '') namespace = undefined;
  const verb = classifyVerb(method, name !== undefined, watchPath || isTruthyParam(url.searchParams.get('watch')));
  return { kind: 'resource', verb, group, version, plural, namespace, name, subresource };
}

function classifyVerb(method: string, named: boolean, watch: boolean): EmulatorVerb {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      if (watch) return 'watch';
      return named ? 'get' : 'list';
  }
}
