/**
 * Per-request DataLoaders: whatever a query asks of many phases or resources at once (when their
 * status began, the worst resource) is read with one statement per kind, however many phases a
 * page holds.
 */
import DataLoader from 'dataloader';
import { capText, renderRevisionYaml, type CappedText } from '../history/revision-diff.ts';
import type { HistoryReader } from '../store/read-history.ts';
import type { PhaseReader } from '../store/read-phases.ts';
import type { AppliedCountRecord, ResourceRecord } from '../store/read-types.ts';
import type { ConditionRecord, ConditionStore } from '../store/condition-store.ts';
import type { PublishedTree, TreeReader } from '../pubsub/resource-trees.ts';
import type { ClusterOwner } from '../queue/ownership.ts';
import type { LiveStatusAnswer, LiveStatusRequester } from '../pubsub/live-status.ts';
import { MAX_LIVE_STATUS_OBJECTS } from '../pubsub/live-status.ts';
import type { ObjectRef } from '../kube/read-live-status.ts';

export interface Loaders {
  /** Each phase's current conditions from checks. */
  phaseConditions: DataLoader<number, ConditionRecord[]>;
  /** How many members of each phase have each applier status value now. */
  appliedCounts: DataLoader<number, AppliedCountRecord[]>;
  /** When each phase's current status began. */
  phaseSince: DataLoader<number, Date | null>;
  /** A phase's open interval for one resource key. */
  currentResource: DataLoader<{ phaseId: number; key: string }, ResourceRecord | null, string>;
  /** When the status a resource had at `at` began. */
  resourceSince: DataLoader<{ phaseId: number; key: string; at: Date }, Date | null, string>;
  /** Stored object revisions by id, rendered as YAML (uncut); null when retention removed one. */
  revision: DataLoader<number, RenderedRevision | null>;
  /** What the request may still return of revision contents and diffs. */
  textBudget: TextBudget;
  /** Published resource trees by cluster and member key (one Redis read per request batch); undefined where none. */
  tree: DataLoader<{ cluster: string; memberKey: string }, PublishedTree | undefined, string>;
  /**
   * Objects' live status blocks, asked of each cluster's owner: one round trip per cluster and
   * batch of up to MAX_LIVE_STATUS_OBJECTS (a page of a phase's resources is one).
   */
  liveStatus: DataLoader<LiveStatusRef, LiveStatusAnswer, string>;
  /** Clusters' owners (one Redis read per request batch); null where none or no Redis is wired. */
  clusterOwner: DataLoader<string, ClusterOwner | null>;
}

/** An object of a cluster whose live status is asked for. */
export interface LiveStatusRef extends ObjectRef {
  cluster: string;
}

/** A stored revision and its YAML rendering. */
export interface RenderedRevision {
  hash: string;
  yaml: string;
}

/** Bytes of revision content and diffs one request may return, over all fields. */
export const REQUEST_TEXT_BUDGET_BYTES = 4 * 1024 * 1024;
/** Milliseconds one request may spend computing diffs, over all fields. */
export const REQUEST_DIFF_BUDGET_MS = 2000;

/**
 * The per-request budget of revision text: a query for every member of 100 versions would
 * otherwise return gigabytes at 64 KiB each. Each text is first cut to its own cap, then charged;
 * once the budget is spent, further texts are only a marker line.
 */
export interface TextBudget {
  /** `text` cut to `maxBytes` and charged against the budget, or a marker when the budget is spent. */
  take(text: string, maxBytes: number): CappedText;
  /**
   * Runs `compute` (a diff) with the milliseconds left of the request's diff time, charging what it
   * took; null without running it once that time is spent. A diff of two big objects that differ
   * everywhere is the costly case, and a query may ask for thousands.
   */
  timed<T>(compute: (timeoutMs: number) => T): T | null;
}

export function createTextBudget(total = REQUEST_TEXT_BUDGET_BYTES, diffMs = REQUEST_DIFF_BUDGET_MS): TextBudget {
  let left = total;
  let msLeft = diffMs;
  return {
    timed(compute) {
      if (msLeft <= 0) return null;
      const start = performance.now();
      try {
        return compute(msLeft);
      } finally {
        msLeft -= performance.now() - start;
      }
    },
    take(text, maxBytes) {
      if (left <= 0)
        return {
          text: `# omitted by phaselog: this request's ${total} bytes of revision text are spent\n`,
          truncated: true,
        };
      // The last text that fits in part is cut at what is left (its marker names that limit).
      const capped = capText(text, Math.min(maxBytes, left));
      left -= Buffer.byteLength(capped.text, 'utf8');
      return capped;
    },
  };
}

/** The loaders of one request, each made when first used (a request uses one kind at most, often none). */
export function createLoaders(read: {
  phases: PhaseReader;
  history: HistoryReader;
  conditions: Pick<ConditionStore, 'currentConditions'>;
  trees?: TreeReader;
  owners?: (clusters: readonly string[]) => Promise<ReadonlyMap<string, ClusterOwner>>;
  liveStatus?: LiveStatusRequester;
}): Loaders {
  let tree: Loaders['tree'] | undefined;
  let liveStatus: Loaders['liveStatus'] | undefined;
  let clusterOwner: Loaders['clusterOwner'] | undefined;
  let phaseConditions: Loaders['phaseConditions'] | undefined;
  let phaseSince: Loaders['phaseSince'] | undefined;
  let appliedCounts: Loaders['appliedCounts'] | undefined;
  let currentResource: Loaders['currentResource'] | undefined;
  let resourceSince: Loaders['resourceSince'] | undefined;
  let revision: Loaders['revision'] | undefined;
  let textBudget: TextBudget | undefined;
  return {
    get tree() {
      return (tree ??= new DataLoader(
        async (refs) => (read.trees === undefined ? refs.map(() => undefined) : read.trees.read(refs)),
        {
          cacheKeyFn: (ref) => `${ref.cluster}\u0000${ref.memberKey}`,
        },
      ));
    },
    get liveStatus() {
      return (liveStatus ??= new DataLoader(
        async (refs) => {
          const requester = read.liveStatus;
          if (requester === undefined) return refs.map((): LiveStatusAnswer => ({ ok: false, reason: 'UNAVAILABLE' }));
          const byCluster = new Map<string, number[]>();
          refs.forEach((ref, i) => {
            const indexes = byCluster.get(ref.cluster);
            if (indexes === undefined) byCluster.set(ref.cluster, [i]);
            else indexes.push(i);
          });
          const answers = new Array<LiveStatusAnswer>(refs.length);
          const asks: Promise<void>[] = [];
          for (const [cluster, indexes] of byCluster)
            for (let start = 0; start < indexes.length; start += MAX_LIVE_STATUS_OBJECTS) {
              const part = indexes.slice(start, start + MAX_LIVE_STATUS_OBJECTS);
              const objects = part.map((i) => {
                const { group, kind, namespace, name } = refs[i] as LiveStatusRef;
                return { group, kind, namespace, name };
              });
              asks.push(
                requester
                  .read(cluster, objects)
                  .then((got) => part.forEach((i, j) => (answers[i] = got[j] as LiveStatusAnswer))),
              );
            }
          await Promise.all(asks);
          return answers;
        },
        { cacheKeyFn: (ref) => [ref.cluster, ref.group, ref.kind, ref.namespace, ref.name].join('\u0000') },
      ));
    },
    get clusterOwner() {
      return (clusterOwner ??= new DataLoader(async (names) => {
        if (read.owners === undefined) return names.map(() => null);
        const owners = await read.owners(names);
        return names.map((name) => owners.get(name) ?? null);
      }));
    },
    get phaseConditions() {
      return (phaseConditions ??= new DataLoader(async (ids) => {
        const byPhase = await read.conditions.currentConditions(ids);
        return ids.map((id) => byPhase.get(id) ?? []);
      }));
    },
    get appliedCounts() {
      return (appliedCounts ??= new DataLoader(async (ids) => {
        const byPhase = new Map<number, AppliedCountRecord[]>();
        for (const row of await read.history.countApplied(ids)) {
          const rows = byPhase.get(row.phaseId);
          if (rows === undefined) byPhase.set(row.phaseId, [row]);
          else rows.push(row);
        }
        return ids.map((id) => byPhase.get(id) ?? []);
      }));
    },
    get phaseSince() {
      return (phaseSince ??= new DataLoader(async (ids) => {
        const starts = new Map((await read.phases.currentRunStarts(ids)).map((s) => [s.phaseId, s.from]));
        return ids.map((id) => starts.get(id) ?? null);
      }));
    },
    get currentResource() {
      return (currentResource ??= new DataLoader(
        async (refs) => {
          const rows = new Map((await read.history.getCurrentResources(refs)).map((r) => [`${r.phaseId}|${r.key}`, r]));
          return refs.map((ref) => rows.get(`${ref.phaseId}|${ref.key}`) ?? null);
        },
        { cacheKeyFn: (ref) => `${ref.phaseId}|${ref.key}` },
      ));
    },
    get resourceSince() {
      return (resourceSince ??= new DataLoader(
        async (refs) => {
          const rows = new Map(
            (await read.history.resourceRunStarts(refs)).map((r) => [
              `${r.phaseId}|${r.key}|${r.at.getTime()}`,
              r.from,
            ]),
          );
          return refs.map((ref) => rows.get(`${ref.phaseId}|${ref.key}|${ref.at.getTime()}`) ?? null);
        },
        { cacheKeyFn: (ref) => `${ref.phaseId}|${ref.key}|${ref.at.getTime()}` },
      ));
    },
    get revision() {
      return (revision ??= new DataLoader(async (ids) => {
        const rows = new Map((await read.history.getRevisions(ids)).map((r) => [r.id, r]));
        return ids.map((id) => {
          const row = rows.get(id);
          return row === undefined ? null : { hash: row.hash, yaml: renderRevisionYaml(row.object) };
        });
      }));
    },
    get textBudget() {
      return (textBudget ??= createTextBudget());
    },
  };
}
