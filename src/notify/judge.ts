/**
 * PURE. How a route judges a change of the log: whether it matches, what it is about (its subject,
 * the unit minDuration and the flapping guard count by), and what becomes of it: told at once,
 * held until it has lasted `minDuration`, summed up as flapping, or suppressed.
 */
import type { StatusChange } from '../history/types.ts';
import type { RouteConfig, RouteMatch } from './config.ts';

/**
 * A change as a route sees it: a change-log entry, the labels of its phase, and for a condition
 * change its condition type (read when the change log carries one).
 */
export interface NotifiableChange extends StatusChange {
  conditionType?: string | null;
  phaseLabels?: Readonly<Record<string, string>>;
}

/** `none` stands for a missing status (an appearance or a disappearance). */
const statusWord = (status: string | null): string => status ?? 'none';

/** Whether `change` is one `match` asks for. */
export function matchesRoute(match: RouteMatch, change: NotifiableChange): boolean {
  if (!(match.changes as readonly string[]).includes(change.scope)) return false;
  if (match.clusters.length > 0 && !match.clusters.includes(change.cluster)) return false;
  if (match.namespaces.length > 0 && (change.phase === null || !match.namespaces.includes(change.phase.namespace)))
    return false;
  if (match.phases.length > 0 && (change.phase === null || !match.phases.includes(change.phase.name))) return false;
  for (const [key, value] of Object.entries(match.labels)) if (change.phaseLabels?.[key] !== value) return false;
  if (
    match.conditionTypes.length > 0 &&
    (change.conditionType == null || !match.conditionTypes.includes(change.conditionType))
  )
    return false;
  if (match.from.length > 0 && !match.from.includes(statusWord(change.fromStatus))) return false;
  if (match.to.length > 0 && !match.to.includes(statusWord(change.toStatus))) return false;
  return true;
}

/** What a change is about: changes of one subject follow one another (cluster, phase, resource or condition). */
export function subjectOf(change: NotifiableChange): string {
  return JSON.stringify([
    change.clusterId,
    change.phaseId,
    change.scope,
    change.resourceKey,
    change.conditionType ?? null,
  ]);
}

/** What the route does with a matching change. */
export type Verdict =
  | { status: 'pending'; kind: 'transition' }
  | { status: 'held'; kind: 'transition' }
  | { status: 'pending'; kind: 'flapping'; flapCount: number }
  | { status: 'held'; kind: 'transition'; reason: 'flapping' };

/** What the judge needs to know of a subject's recent past on this route. */
export interface SubjectPast {
  /** Matching changes of the subject within the flapping window before this one (this one excluded). */
  recentChanges: number;
  /** The subject's previous matching change was flapping (a summary, or held or suppressed as flapping). */
  previousFlapping: boolean;
}

/**
 * The verdict on a matching change. Flapping: with this one, more than `maxChanges` within the
 * window. The first such change is sent as one summary; each next one is held as flapping: the
 * following change suppresses it, and the last of the storm, once a whole window passed without
 * another change, is told (so the status the subject settled in is known). Once the count drops,
 * changes are told again.
 */
export function judgeChange(route: Pick<RouteConfig, 'minDuration' | 'flapping'>, past: SubjectPast): Verdict {
  if (route.flapping !== undefined && past.recentChanges + 1 > route.flapping.maxChanges) {
    return past.previousFlapping
      ? { status: 'held', kind: 'transition', reason: 'flapping' }
      : { status: 'pending', kind: 'flapping', flapCount: past.recentChanges + 1 };
  }
  return route.minDuration > 0 ? { status: 'held', kind: 'transition' } : { status: 'pending', kind: 'transition' };
}

/**
 * How long a held change must last: a flapping one, the flapping window; another, `minDuration`.
 */
export function holdFor(route: Pick<RouteConfig, 'minDuration' | 'flapping'>, reason: string | null): number {
  return reason === 'flapping' && route.flapping !== undefined ? route.flapping.window : route.minDuration;
}

/**
 * A held change, given the next change of its subject (any change of the log, matching or not):
 * superseded when that came sooner than `holdMs`, due once `holdMs` has passed with none.
 */
export function releaseHeld(
  heldAt: Date,
  holdMs: number,
  next: { at: Date } | undefined,
  now: Date,
): 'superseded' | 'due' | 'wait' {
  if (next !== undefined && next.at.getTime() - heldAt.getTime() < holdMs) return 'superseded';
  if (next !== undefined || now.getTime() - heldAt.getTime() >= holdMs) return 'due';
  return 'wait';
}
