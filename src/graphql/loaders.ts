/**
 * Per-request DataLoaders: whatever a query asks of many phases or resources at once (when their
 * status began, the worst resource) is read with one statement per kind, however many phases a
 * page holds.
 */
import DataLoader from 'dataloader';
import type { HistoryReader } from '../store/read-history.ts';
import type { PhaseReader } from '../store/read-phases.ts';
import type { ResourceRecord } from '../store/read-types.ts';

export interface Loaders {
  /** When each phase's current status began. */
  phaseSince: DataLoader<number, Date | null>;
  /** A phase's open interval for one resource key. */
  currentResource: DataLoader<{ phaseId: number; key: string }, ResourceRecord | null, string>;
  /** When the status a resource had at `at` began. */
  resourceSince: DataLoader<{ phaseId: number; key: string; at: Date }, Date | null, string>;
}

/** The loaders of one request, each made when first used (a request uses one kind at most, often none). */
export function createLoaders(read: { phases: PhaseReader; history: HistoryReader }): Loaders {
  let phaseSince: Loaders['phaseSince'] | undefined;
  let currentResource: Loaders['currentResource'] | undefined;
  let resourceSince: Loaders['resourceSince'] | undefined;
  return {
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
          const rows = new Map((await read.history.resourceRunStarts(refs)).map((r) => [`${r.phaseId}|${r.key}|${r.at.getTime()}`, r.from]));
          return refs.map((ref) => rows.get(`${ref.phaseId}|${ref.key}|${ref.at.getTime()}`) ?? null);
        },
        { cacheKeyFn: (ref) => `${ref.phaseId}|${ref.key}|${ref.at.getTime()}` },
      ));
    },
  };
}
