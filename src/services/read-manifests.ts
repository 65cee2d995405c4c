/** A phase's manifests over time, each with what changed since the one before. */
import type { HistoryReader, IntervalCursor } from '../store/read-history.ts';
import type { ManifestEntry, ManifestVersionRecord, Page } from '../store/read-types.ts';

/** A resource whose object revision differs between two moments. */
export interface RevisionChange {
  key: string;
  fromRevision: number | null;
  toRevision: number | null;
}

/** A member object's revision as of one moment (a manifest version's start). */
export interface RevisionAt {
  revisionId: number;
  at: Date;
  /** The caller may not read the member's namespace: its content is not given. */
  withheld: boolean;
}

/** What happened to one member object between a manifest version and the one before. */
export interface ObjectChange {
  key: string;
  change: 'ADDED' | 'REMOVED' | 'CHANGED';
  /** The revision at the previous version's start; null when added or not observed then. */
  before: RevisionAt | null;
  /** The revision at this version's start; null when removed or not observed then. */
  after: RevisionAt | null;
  /** The caller may not read the member's namespace (a phase may list objects of other namespaces). */
  withheld: boolean;
}

/** A manifest version and its difference from the previous one. */
export interface ManifestVersion {
  record: ManifestVersionRecord;
  added: ManifestEntry[];
  removed: ManifestEntry[];
  revisionsChanged: RevisionChange[];
  /** Added, removed and revised members, by key, with the revisions to read their content from. */
  changes: ObjectChange[];
}

const entryKey = (e: ManifestEntry): string => `${e.group}/${e.kind}/${e.namespace}/${e.name}`;

/** Entries added and removed between two manifests (identity without version, as refKey). */
export function diffEntries(
  before: readonly ManifestEntry[],
  after: readonly ManifestEntry[],
): { added: ManifestEntry[]; removed: ManifestEntry[] } {
  const beforeKeys = new Set(before.map(entryKey));
  const afterKeys = new Set(after.map(entryKey));
  return {
    added: after.filter((e) => !beforeKeys.has(entryKey(e))),
    removed: before.filter((e) => !afterKeys.has(entryKey(e))),
  };
}

/**
 * Whether the caller may read the content of a member in `namespace` ('' for cluster-scoped) of a
 * phase it may see: a phase's inventory may list objects of other namespaces, whose content a token
 * restricted to the phase's namespace must not read.
 */
export type MayReadNamespace = (namespace: string) => boolean;

/** One page of manifest versions, newest first, with diffs; two statements whatever the page size. */
export async function listManifestVersions(
  history: HistoryReader,
  phaseId: number,
  first: number,
  after?: IntervalCursor,
  mayRead: MayReadNamespace = () => true,
): Promise<Page<ManifestVersion>> {
  const page = await history.listManifests(phaseId, first, after);
  const times = new Map<number, Date>();
  for (const v of page.items) {
    times.set(v.from.getTime(), v.from);
    if (v.previous) times.set(v.previous.from.getTime(), v.previous.from);
  }
  const revisions = await history.revisionsAt(phaseId, [...times.values()]);
  const byTime = new Map<number, Map<string, number | null>>();
  for (const r of revisions) {
    const map = byTime.get(r.at.getTime()) ?? new Map<string, number | null>();
    map.set(r.key, r.revisionId);
    byTime.set(r.at.getTime(), map);
  }
  const items = page.items.map((record): ManifestVersion => {
    if (record.previous === null) return { record, added: [], removed: [], revisionsChanged: [], changes: [] };
    const { added, removed } = diffEntries(record.previous.entries, record.entries);
    const before = byTime.get(record.previous.from.getTime()) ?? new Map<string, number | null>();
    const now = byTime.get(record.from.getTime()) ?? new Map<string, number | null>();
    const previousKeys = new Set(record.previous.entries.map(entryKey));
    const revisionsChanged = record.entries
      .map(entryKey)
      .filter((key) => previousKeys.has(key) && before.has(key) && now.has(key) && before.get(key) !== now.get(key))
      .sort()
      .map((key) => ({ key, fromRevision: before.get(key) ?? null, toRevision: now.get(key) ?? null }));
    const previousFrom = record.previous.from;
    const withheldOf = (key: string): boolean => !mayRead(key.split('/')[2] ?? '');
    const side = (revisionId: number | null | undefined, time: Date, key: string): RevisionAt | null =>
      revisionId === undefined || revisionId === null ? null : { revisionId, at: time, withheld: withheldOf(key) };
    const changes: ObjectChange[] = [
      ...added.map((e): ObjectChange => ({
        key: entryKey(e),
        change: 'ADDED',
        before: null,
        after: side(now.get(entryKey(e)), record.from, entryKey(e)),
        withheld: withheldOf(entryKey(e)),
      })),
      ...removed.map((e): ObjectChange => ({
        key: entryKey(e),
        change: 'REMOVED',
        before: side(before.get(entryKey(e)), previousFrom, entryKey(e)),
        after: null,
        withheld: withheldOf(entryKey(e)),
      })),
      ...revisionsChanged.map((c): ObjectChange => ({
        key: c.key,
        change: 'CHANGED',
        before: side(c.fromRevision, previousFrom, c.key),
        after: side(c.toRevision, record.from, c.key),
        withheld: withheldOf(c.key),
      })),
    ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { record, added, removed, revisionsChanged, changes };
  });
  return { items, hasMore: page.hasMore };
}
