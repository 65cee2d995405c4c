/**
 * The access rule, stated once: which clusters and namespaces an {@link AccessScope} may see. SQL
 * reads, live feeds and cluster-level checks all take their form of it from
 * {@link RESTRICTIONS} here, so they cannot disagree.
 *
 * - Each restriction is a list the subject's value must be in; an empty list restricts nothing.
 * - A cluster-level fact (the cluster itself, its reachability changes) has no namespace: whoever
 *   may see the cluster sees it, whatever the namespace restriction.
 * - A row of a phase whose namespace is no longer known (the change log outlives phases that
 *   retention deleted) is admitted by no namespace restriction: unknown fails closed.
 */
import type { AccessScope } from './read-types.ts';
import type { Sql } from './sql.ts';
import { sql } from './sql.ts';

/** What a row is about, as the rule sees it (the JS form). */
export interface AccessSubject {
  cluster: string;
  /** The namespace of the phase it belongs to; null when that is unknown (see {@link clusterLevel}). */
  namespace: string | null;
  /** A cluster-level fact: exempt from the namespace restriction. @default false */
  clusterLevel?: boolean;
}

/**
 * A change-log row or live change event as the rule sees it: with no phase id, a cluster-level
 * fact (reachability); with one whose phase is not known, of an unknown namespace.
 */
export function changeSubject(change: {
  cluster: string;
  phaseId: number | null;
  phase: { namespace: string } | null;
}): AccessSubject {
  return { cluster: change.cluster, namespace: change.phase?.namespace ?? null, clusterLevel: change.phaseId === null };
}

/** Where a statement holds the subject's values (the SQL form): expressions over the reader's own table aliases. */
export interface AccessColumns {
  /** The cluster's name, e.g. c."name". */
  cluster: Sql;
  /** The phase's namespace, e.g. p."namespace" (NULL when unknown). */
  namespace: Sql;
  /** A boolean expression true for cluster-level rows, e.g. sc."phaseId" IS NULL; omitted when every row belongs to a phase. */
  clusterLevel?: Sql;
}

type Field = 'cluster' | 'namespace';

interface Restriction {
  /** The scope's list. */
  list: keyof AccessScope;
  /** The subject's value it restricts. */
  field: Field;
  /** Cluster-level facts pass it whatever the list. */
  exemptsClusterLevel: boolean;
}

/** The rule. */
const RESTRICTIONS: readonly Restriction[] = [
  { list: 'clusters', field: 'cluster', exemptsClusterLevel: false },
  { list: 'namespaces', field: 'namespace', exemptsClusterLevel: true },
];

/** The restrictions `scope` applies (the non-empty lists), each with its list. */
function restrictionsOf(scope: AccessScope): { restriction: Restriction; names: readonly string[] }[] {
  return RESTRICTIONS.filter((r) => scope[r.list].length > 0).map((restriction) => ({
    restriction,
    names: scope[restriction.list],
  }));
}

/** Whether `scope` restricts anything (false: it sees everything). */
export function isRestricted(scope: AccessScope): boolean {
  return restrictionsOf(scope).length > 0;
}

/**
 * Whether `inner` sees no more than `outer` (a token a restricted admin may manage): on each
 * restriction, `outer` is unrestricted (empty), or `inner` is restricted to some of `outer`'s (an
 * empty `inner` list means all, which is broader than any restriction).
 */
export function isAccessWithin(inner: AccessScope, outer: AccessScope): boolean {
  return RESTRICTIONS.every(
    ({ list }) =>
      outer[list].length === 0 || (inner[list].length > 0 && inner[list].every((name) => outer[list].includes(name))),
  );
}

/** Whether `scope` may see `subject`. */
export function mayAccess(scope: AccessScope, subject: AccessSubject): boolean {
  return restrictionsOf(scope).every(({ restriction, names }) => {
    if (restriction.exemptsClusterLevel && subject.clusterLevel === true) return true;
    const value = subject[restriction.field];
    return value !== null && names.includes(value);
  });
}

/**
 * SQL conditions (to AND into a WHERE) restricting rows to what `scope` may see. Values are
 * parameters; the text depends only on which lists are non-empty and on `columns`, so each reader
 * keeps a few prepared statements.
 */
export function accessConditions(scope: AccessScope, columns: AccessColumns): Sql[] {
  return restrictionsOf(scope).map(({ restriction, names }) => {
    // NULL = ANY(...) is NULL: an unknown namespace fails the condition, as in mayAccess.
    const inList = sql`${columns[restriction.field]} = ANY(${[...names]}::text[])`;
    return restriction.exemptsClusterLevel && columns.clusterLevel !== undefined
      ? sql`(${columns.clusterLevel} OR ${inList})`
      : inList;
  });
}
