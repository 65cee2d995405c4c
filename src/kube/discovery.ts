/**
 * Resolves group + kind to the REST resource through the discovery API (`/api/v1`, `/apis`,
 * `/apis/<group>/<version>`), lazily per group, cached for `ttlMs`. A kind the cache does not know
 * triggers at most one refresh per `missRefreshMs`, so a phase listing a kind whose CRD is not
 * installed does not hammer the server; it gets KIND_NOT_FOUND.
 */
import { classifyKubeError, type KubeError } from './errors.ts';
import type { KubeTransport } from './transport.ts';

/** A kind the server serves. */
export interface ResolvedKind {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name used in URLs. */
  resource: string;
  namespaced: boolean;
  verbs: string[];
}

/** Discovery for one cluster. */
export interface Discovery {
  /** The served resource for a kind, or a classified error (KIND_NOT_FOUND when not served). */
  resolve(group: string, kind: string): Promise<ResolvedKind | KubeError>;
  /** Drops every cached answer. */
  invalidate(): void;
  /** Discovery requests sent so far. */
  readonly requestCount: number;
}

/** Options of {@link createDiscovery}. */
export interface DiscoveryOptions {
  /** How long a discovery answer is trusted. @default 300000 (5 min) */
  ttlMs?: number;
  /** Minimum time between refreshes caused by an unknown kind or group. @default 30000 */
  missRefreshMs?: number;
  /** Injectable clock. */
  now?: () => number;
}

interface Cached<T> {
  fetchedAt: number;
  value: Promise<T>;
}

interface GroupInfo {
  preferred: string;
  versions: string[];
}

/** Creates the discovery cache of one cluster. */
export function createDiscovery(transport: KubeTransport, options: DiscoveryOptions = {}): Discovery {
  const ttl = options.ttlMs ?? 300_000;
  const missRefresh = options.missRefreshMs ?? 30_000;
  const now = options.now ?? Date.now;
  let groups: Cached<Map<string, GroupInfo>> | undefined;
  const versions = new Map<string, Cached<ResolvedKind[]>>();
  let requests = 0;

  function fetchJson(path: string): Promise<unknown> {
    requests += 1;
    return transport.getJson(path);
  }

  /** Returns a cached promise unless it is too old; failed fetches are never kept. */
  function cached<T>(
    entry: Cached<T> | undefined,
    maxAge: number,
    load: () => Promise<T>,
    store: (c: Cached<T> | undefined) => void,
  ): Promise<T> {
    if (entry !== undefined && now() - entry.fetchedAt < maxAge) return entry.value;
    const fresh: Cached<T> = { fetchedAt: now(), value: load() };
    store(fresh);
    fresh.value.catch(() => store(undefined));
    return fresh.value;
  }

  function loadGroups(maxAge: number): Promise<Map<string, GroupInfo>> {
    return cached(
      groups,
      maxAge,
      async () => parseGroupList(await fetchJson('/apis')),
      (c) => {
        groups = c;
      },
    );
  }

  function loadVersion(group: string, version: string, maxAge: number): Promise<ResolvedKind[]> {
    const key = `${group}/${version}`;
    const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
    return cached(
      versions.get(key),
      maxAge,
      async () => parseResourceList(await fetchJson(path), group, version),
      (c) => {
        if (c === undefined) versions.delete(key);
        else versions.set(key, c);
      },
    );
  }

  async function find(group: string, kind: string, maxAge: number): Promise<ResolvedKind | undefined> {
    const info: GroupInfo | undefined =
      group === '' ? { preferred: 'v1', versions: ['v1'] } : (await loadGroups(maxAge)).get(group);
    if (info === undefined) return undefined;
    // The preferred version first; other versions only when the kind is missing from it.
    for (const version of [info.preferred, ...info.versions.filter((v) => v !== info.preferred)]) {
      const match = (await loadVersion(group, version, maxAge)).find((r) => r.kind === kind);
      if (match !== undefined) return match;
    }
    return undefined;
  }

  async function resolve(group: string, kind: string): Promise<ResolvedKind | KubeError> {
    try {
      const found = (await find(group, kind, ttl)) ?? (await find(group, kind, missRefresh));
      if (found !== undefined) return found;
      return {
        kind: 'KIND_NOT_FOUND',
        message: `the server does not serve kind ${group === '' ? kind : `${kind}.${group}`}`,
      };
    } catch (err) {
      return classifyKubeError(err);
    }
  }

  return {
    resolve,
    invalidate() {
      groups = undefined;
      versions.clear();
    },
    get requestCount() {
      return requests;
    },
  };
}

function parseGroupList(body: unknown): Map<string, GroupInfo> {
  const out = new Map<string, GroupInfo>();
  const list = (body as { groups?: unknown }).groups;
  if (!Array.isArray(list)) return out;
  for (const item of list as Array<Record<string, unknown>>) {
    const name = item.name;
    const versionList = Array.isArray(item.versions) ? (item.versions as Array<Record<string, unknown>>) : [];
    const names = versionList.map((v) => v.version).filter((v): v is string => typeof v === 'string');
    const preferred = (item.preferredVersion as { version?: unknown } | undefined)?.version;
    if (typeof name !== 'string' || names.length === 0) continue;
    out.set(name, { preferred: typeof preferred === 'string' ? preferred : (names[0] ?? ''), versions: names });
  }
  return out;
}

function parseResourceList(body: unknown, group: string, version: string): ResolvedKind[] {
  const list = (body as { resources?: unknown }).resources;
  if (!Array.isArray(list)) return [];
  const out: ResolvedKind[] = [];
  for (const item of list as Array<Record<string, unknown>>) {
    // Subresources (`deployments/status`) share the kind of their parent; skip them.
    if (typeof item.name !== 'string' || item.name.includes('/') || typeof item.kind !== 'string') continue;
    const verbs = Array.isArray(item.verbs)
      ? (item.verbs as unknown[]).filter((v): v is string => typeof v === 'string')
      : [];
    out.push({ group, version, kind: item.kind, resource: item.name, namespaced: item.namespaced === true, verbs });
  }
  return out;
}

/** The collection path of a resolved kind, in one namespace or cluster-wide. */
export function collectionPath(resolved: ResolvedKind, namespace?: string): string {
  const base = resolved.group === '' ? `/api/${resolved.version}` : `/apis/${resolved.group}/${resolved.version}`;
  return resolved.namespaced && namespace !== undefined && namespace !== ''
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${resolved.resource}`
    : `${base}/${resolved.resource}`;
}

/** True when the value is a {@link KubeError} rather than a resolved kind. */
export function isKubeError(value: ResolvedKind | KubeError): value is KubeError {
  return !('resource' in value);
}
