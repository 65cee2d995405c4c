/**
 * Discovery documents: `/api`, `/apis`, `/apis/<group>`, `/api/v1`, `/apis/<group>/<version>`
 * (legacy form), the aggregated form (apidiscovery.k8s.io/v2) that kubectl >= 1.30 asks for, and
 * `/version`.
 */
import { formatApiVersion, listVerbs, type ResourceType } from './catalog.ts';
import type { TypeRegistry } from './registry.ts';

const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/** Content type of aggregated discovery answers. */
export const AGGREGATED_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** Whether the Accept header asks for aggregated discovery v2. */
export function wantsAggregated(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((part) => {
    const p = part.replace(/\s/g, '');
    return (
      p.includes('as=APIGroupDiscoveryList') &&
      p.includes('v=v2') &&
      !p.includes('v=v2beta1') &&
      p.includes('g=apidiscovery.k8s.io')
    );
  });
}

/** `/version`. */
export function buildVersion(): Record<string, unknown> {
  return {
    major: '1',
    minor: '32',
    gitVersion: 'v1.32.0',
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.23.0',
    compiler: 'gc',
    platform: 'linux/amd64',
    emulator: 'phaselog',
  };
}

/** `/api`. */
export function buildCoreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(group: string, versions: string[]): Record<string, unknown> {
  const vs = versions.map((v) => ({ groupVersion: formatApiVersion(group, v), version: v }));
  return { name: group, versions: vs, preferredVersion: vs[0] };
}

/** `/apis`. */
export function buildGroupList(registry: TypeRegistry): Record<string, unknown> {
  const groups = registry
    .listGroups()
    .filter((g) => g.group !== '')
    .map((g) => groupEntry(g.group, g.versions));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** `/apis/<group>`, or undefined when not served. */
export function buildGroup(registry: TypeRegistry, group: string): Record<string, unknown> | undefined {
  const g = registry.listGroups().find((x) => x.group === group && group !== '');
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g.group, g.versions) } : undefined;
}

function typesAt(registry: TypeRegistry, group: string, version: string): ResourceType[] {
  return registry.list().filter((t) => t.group === group && t.versions.includes(version));
}

/** `/api/v1` or `/apis/<group>/<version>`, or undefined when not served. */
export function buildResourceList(
  registry: TypeRegistry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const types = typesAt(registry, group, version);
  if (types.length === 0) return undefined;
  const resources: Record<string, unknown>[] = [];
  for (const t of types) {
    const entry: Record<string, unknown> = {
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: listVerbs(),
    };
    if (t.shortNames.length > 0) entry['shortNames'] = t.shortNames;
    if (t.categories.length > 0) entry['categories'] = t.categories;
    resources.push(entry);
    if (t.hasStatus)
      resources.push({
        name: `${t.plural}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: SUBRESOURCE_VERBS,
      });
    if (t.scale)
      resources.push({
        name: `${t.plural}/scale`,
        singularName: '',
        namespaced: t.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: SUBRESOURCE_VERBS,
      });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: formatApiVersion(group, version), resources };
}

function aggregatedResource(t: ResourceType, version: string): Record<string, unknown> {
  const responseKind = { group: t.group, version, kind: t.kind };
  const r: Record<string, unknown> = {
    resource: t.plural,
    responseKind,
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singular,
    verbs: listVerbs(),
  };
  if (t.shortNames.length > 0) r['shortNames'] = t.shortNames;
  if (t.categories.length > 0) r['categories'] = t.categories;
  const subresources: Record<string, unknown>[] = [];
  if (t.hasStatus) subresources.push({ subresource: 'status', responseKind, verbs: SUBRESOURCE_VERBS });
  if (t.scale)
    subresources.push({
      subresource: 'scale',
      responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: SUBRESOURCE_VERBS,
    });
  if (subresources.length > 0) r['subresources'] = subresources;
  return r;
}

/** Aggregated discovery for `/api` (core only) or `/apis` (every other group). */
export function buildAggregated(registry: TypeRegistry, root: '/api' | '/apis'): Record<string, unknown> {
  const core = root === '/api';
  const items = registry
    .listGroups()
    .filter((g) => (g.group === '') === core)
    .map((g) => ({
      metadata: { name: g.group, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        resources: typesAt(registry, g.group, v).map((t) => aggregatedResource(t, v)),
        freshness: 'Current',
      })),
    }));
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
