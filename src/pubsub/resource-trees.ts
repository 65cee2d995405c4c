/**
 * Resource trees between processes: the worker that watches a cluster publishes each owning
 * member's children (src/status/children.ts) to Redis, and the API reads them there. The API may
 * run apart from the workers (roles `api` and `worker`), so it cannot read a worker's caches, and
 * it never asks the cluster per request.
 *
 * One key per member (`<prefix>:tree:<cluster>:<group/kind/namespace/name>`), holding compact JSON,
 * with a TTL a few publish intervals long: a tree nobody refreshes (the worker stopped, the member
 * left its phase) goes away by itself and the API answers "unknown" instead of an old tree. A key is
 * rewritten only when its tree changed; otherwise only its TTL is renewed.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { RESOURCE_STATUSES, type ResourceStatus } from '../status/types.ts';
import type { ChildNode, ChildTree } from '../status/children.ts';

/** Default key prefix (tests use their own). */
export const TREE_PREFIX = 'phaselog';

/** A member's published tree, as the API reads it. */
export interface PublishedTree extends ChildTree {
  /** When the publishing worker last saw this tree change. */
  changedAt: Date;
}

function treeKey(prefix: string, cluster: string, memberKey: string): string {
  // The cluster is encoded so no cluster name can reach into another cluster's keys.
  return `${prefix}:tree:${encodeURIComponent(cluster)}:${memberKey}`;
}

/** Publishes a cluster's trees; keeps what it last wrote so unchanged trees cost one PEXPIRE. */
export interface TreePublisher {
  /** Writes the trees of `cluster` (member key -> tree). */
  publish(cluster: string, trees: ReadonlyMap<string, ChildTree>): Promise<void>;
  /**
   * Forgets what was written of `cluster`, whose trees this process no longer builds (its watch
   * stopped, another worker may own it now); its keys expire unless someone publishes them.
   */
  forget(cluster: string): void;
}

/** Options of {@link createTreePublisher}. */
export interface TreePublisherOptions {
  /** @default TREE_PREFIX */
  prefix?: string;
  /** How long a tree lives without being published again. @default 30000 */
  ttlMs?: number;
}

/** What was last written of one cluster: each member's encoded tree, by member key. */
interface Written {
  bodies: ReadonlyMap<string, string>;
}

export function createTreePublisher(redis: Redis, options: TreePublisherOptions = {}): TreePublisher {
  const prefix = options.prefix ?? TREE_PREFIX;
  const ttlMs = options.ttlMs ?? 30_000;
  // By cluster: a publish reads and replaces its own cluster's entry only, so its cost follows that
  // cluster's members, not every member of every cluster the worker publishes.
  const last = new Map<string, Written>();
  return {
    async publish(cluster, trees) {
      let state = last.get(cluster);
      if (state === undefined) {
        state = { bodies: new Map() };
        last.set(cluster, state);
      }
      const before = state.bodies;
      const pipeline = redis.pipeline();
      const written = new Map<string, string>();
      for (const [memberKey, tree] of trees) {
        const key = treeKey(prefix, cluster, memberKey);
        const body = JSON.stringify({ c: tree.children.map(encodeNode), o: tree.omitted });
        if (before.get(memberKey) === body) {
          pipeline.pexpire(key, ttlMs);
        } else {
          pipeline.set(key, JSON.stringify({ at: Date.now(), ...(JSON.parse(body) as object) }), 'PX', ttlMs);
          written.set(memberKey, body);
        }
      }
      const results = await pipeline.exec();
      // Members gone from this cluster's phases are not carried over: their keys expire. A PEXPIRE
      // that found no key (it expired while Redis was away) is not either: written again next time.
      const next = new Map<string, string>();
      let i = 0;
      for (const [memberKey] of trees) {
        const [error, reply] = results?.[i++] ?? [new Error('no reply'), null];
        if (error !== null) continue;
        const body = written.get(memberKey) ?? (reply === 0 ? undefined : before.get(memberKey));
        if (body !== undefined) next.set(memberKey, body);
      }
      state.bodies = next;
      // Forgotten while this was written: the entry is no longer in `last`, and stays out.
      if (next.size === 0 && last.get(cluster) === state) last.delete(cluster);
    },
    forget(cluster) {
      last.delete(cluster);
    },
  };
}

// Short field names: a tree of 200 Pods is read on every request that asks for it.
interface EncodedNode {
  g: string;
  k: string;
  ns: string;
  n: string;
  s: ResourceStatus;
  m: string;
  c?: EncodedNode[];
}

function encodeNode(node: ChildNode): EncodedNode {
  return {
    g: node.group,
    k: node.kind,
    ns: node.namespace,
    n: node.name,
    s: node.status,
    m: node.message,
    ...(node.children.length > 0 ? { c: node.children.map(encodeNode) } : {}),
  };
}

const nodeSchema: z.ZodType<EncodedNode> = z.lazy(() =>
  z.object({
    g: z.string(),
    k: z.string(),
    ns: z.string(),
    n: z.string(),
    s: z.enum(RESOURCE_STATUSES as [ResourceStatus, ...ResourceStatus[]]),
    m: z.string(),
    c: z.array(nodeSchema).optional(),
  }),
);
const treeSchema = z.object({ at: z.number(), c: z.array(nodeSchema), o: z.number().int().min(0) });

function decodeNode(node: EncodedNode): ChildNode {
  return {
    group: node.g,
    kind: node.k,
    namespace: node.ns,
    name: node.n,
    status: node.s,
    message: node.m,
    children: (node.c ?? []).map(decodeNode),
  };
}

/** Reads published trees for the API. */
export interface TreeReader {
  /** The trees of these members of `cluster`, in order; undefined where none is published (or it is unreadable). */
  read(members: readonly { cluster: string; memberKey: string }[]): Promise<(PublishedTree | undefined)[]>;
}

export function createTreeReader(redis: Redis, options: { prefix?: string } = {}): TreeReader {
  const prefix = options.prefix ?? TREE_PREFIX;
  return {
    async read(members) {
      if (members.length === 0) return [];
      const values = await redis.mget(...members.map((m) => treeKey(prefix, m.cluster, m.memberKey)));
      return values.map((value) => {
        if (value === null) return undefined;
        let parsed: unknown;
        try {
          parsed = JSON.parse(value);
        } catch {
          return undefined;
        }
        const tree = treeSchema.safeParse(parsed);
        if (!tree.success) return undefined;
        return { children: tree.data.c.map(decodeNode), omitted: tree.data.o, changedAt: new Date(tree.data.at) };
      });
    },
  };
}
