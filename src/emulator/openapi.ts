/**
 * Minimal OpenAPI documents. kubectl reads `/openapi/v3` to learn that the server validates fields
 * itself (the `fieldValidation` query parameter on PATCH of each kind); with that it skips
 * client-side schema validation, so `kubectl apply` works without `--validate=false`. Each kind
 * gets a top-level schema (apiVersion, kind, metadata, and free-form spec and status) tagged with
 * its group-version-kind, which is what `kubectl explain <kind>` looks up; field-level schemas are
 * not published, so `kubectl explain <kind>.spec.<field>` reports that the field does not exist.
 */
import { createHash } from 'node:crypto';
import { formatApiVersion, type ResourceType } from './catalog.ts';
import type { TypeRegistry } from './registry.ts';

function gvPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/** `/openapi/v3`: one entry per served group-version. */
export function buildOpenApiV3Index(registry: TypeRegistry): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const g of registry.listGroups()) {
    for (const v of g.versions) {
      const p = gvPath(g.group, v);
      const doc = buildOpenApiV3GroupVersion(registry, p.split('/'));
      const hash = createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();
      paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash}` };
    }
  }
  return { paths };
}

const QUERY_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string' },
  uniqueItems: true,
}));

function itemPaths(t: ResourceType, group: string, version: string): [string, Record<string, unknown>][] {
  const gvk = { group, version, kind: t.kind };
  const base = `/${gvPath(group, version)}${t.namespaced ? '/namespaces/{namespace}' : ''}/${t.plural}/{name}`;
  const op = (verb: string): Record<string, unknown> => ({
    operationId: `${verb}${t.kind}`,
    parameters: QUERY_PARAMS,
    responses: { '200': { description: 'OK' } },
    'x-kubernetes-action': verb,
    'x-kubernetes-group-version-kind': gvk,
  });
  const out: [string, Record<string, unknown>][] = [
    [base, { get: op('get'), put: op('put'), patch: op('patch'), delete: op('delete') }],
  ];
  if (t.hasStatus) out.push([`${base}/status`, { get: op('get'), put: op('put'), patch: op('patch') }]);
  return out;
}

// kube-apiserver's naming: io.k8s.api.<group prefix>.<version>.<Kind> for built-ins, reversed group for CRDs.
function schemaName(group: string, version: string, kind: string): string {
  const prefix =
    group === ''
      ? 'io.k8s.api.core'
      : group.endsWith('.k8s.io') || !group.includes('.')
        ? `io.k8s.api.${group.split('.')[0] ?? group}`
        : group.split('.').reverse().join('.');
  return `${prefix}.${version}.${kind}`;
}

function kindSchema(t: ResourceType, group: string, version: string): Record<string, unknown> {
  const freeForm = (what: string): Record<string, unknown> => ({
    type: 'object',
    description: `${what} of the ${t.kind}. The emulator accepts any fields here and publishes no schema for them.`,
    'x-kubernetes-preserve-unknown-fields': true,
  });
  const properties: Record<string, unknown> = {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents.',
    },
    metadata: {
      type: 'object',
      description: "Standard object's metadata (name, namespace, labels, annotations, ...).",
      'x-kubernetes-preserve-unknown-fields': true,
    },
    spec: freeForm('Desired state'),
  };
  if (t.hasStatus) properties['status'] = freeForm('Most recently observed status');
  return {
    type: 'object',
    description: `${t.kind} (${formatApiVersion(group, version)}) as served by the phaselog Kubernetes API emulator, which publishes top-level schemas only.`,
    properties,
    'x-kubernetes-group-version-kind': [{ group, version, kind: t.kind }],
  };
}

/** `/openapi/v3/api/v1`, `/openapi/v3/apis/<group>/<version>`, or undefined when not served. */
export function buildOpenApiV3GroupVersion(
  registry: TypeRegistry,
  path: string[],
): Record<string, unknown> | undefined {
  let group: string;
  let version: string;
  if (path[0] === 'api' && path.length === 2) {
    group = '';
    version = path[1] as string;
  } else if (path[0] === 'apis' && path.length === 3) {
    group = path[1] as string;
    version = path[2] as string;
  } else {
    return undefined;
  }
  const types = registry.list().filter((t) => t.group === group && t.versions.includes(version));
  if (types.length === 0) return undefined;
  const paths: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const t of types) {
    for (const [p, ops] of itemPaths(t, group, version)) paths[p] = ops;
    schemas[schemaName(group, version, t.kind)] = kindSchema(t, group, version);
  }
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes (phaselog emulator)', version: formatApiVersion(group, version) },
    paths,
    components: { schemas },
  };
}

/** `/openapi/v2` as JSON (real servers prefer protobuf; clients that insist on it get 406). */
export function buildOpenApiV2(registry: TypeRegistry): Record<string, unknown> {
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes (phaselog emulator)', version: 'v1.32.0' },
    paths: {},
    definitions: {},
    'x-served-kinds': registry.list().map((t) => `${formatApiVersion(t.group, t.versions[0] ?? '')}/${t.kind}`),
  };
}
