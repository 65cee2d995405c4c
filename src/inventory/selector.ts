/**
 * Label-selector phases: a phase declared in config as "every object of these kinds whose labels
 * match this selector" (the way EMCO's ResourceBundleState or `kubectl apply --prune -l` scope a
 * set). Parsing validates the declaration; {@link selectEntries} fills the entries from objects
 * read from the cluster.
 *
 * Phase identity: `id` and `name` are the declared `name`.
 */
import { buildPhase, failParse } from './build-phase.ts';
import { readGroupKind } from './group-kind.ts';
import { describeValue, isRecord, readIdentity, readString, readStringMap } from './object-fields.ts';
import type {
  GroupKind,
  LabelSelector,
  LabelSelectorRequirement,
  ObjectRef,
  Phase,
  PhaseParseResult,
} from './types.ts';

const OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/**
 * Parses `{ name, namespace?, labels?, selector: {matchLabels?, matchExpressions?}, kinds:
 * ["apps/Deployment", "Service", {group, kind}], namespaces?: [] }`. Never throws.
 */
export function parseSelectorPhase(def: unknown): PhaseParseResult {
  if (!isRecord(def))
    return failParse('MALFORMED_SELECTOR', `selector phase must be an object, got ${describeValue(def)}`);
  const name = readString(def.name);
  if (name === '') return failParse('MALFORMED_SELECTOR', 'selector phase needs a non-empty name');
  const selector = readLabelSelector(def.selector);
  if (typeof selector === 'string') return failParse('MALFORMED_SELECTOR', `selector phase "${name}": ${selector}`);
  const kinds = readKinds(def.kinds);
  if (typeof kinds === 'string') return failParse('MALFORMED_SELECTOR', `selector phase "${name}": ${kinds}`);
  const namespaces = def.namespaces === undefined ? [] : def.namespaces;
  if (!Array.isArray(namespaces) || !namespaces.every((ns) => typeof ns === 'string')) {
    return failParse('MALFORMED_SELECTOR', `selector phase "${name}": namespaces must be a list of strings`);
  }
  return {
    ok: true,
    phase: buildPhase({
      source: 'selector',
      id: name,
      name,
      namespace: readString(def.namespace),
      labels: readStringMap(def.labels),
      entries: [],
      errors: [],
      selector: { selector, kinds, namespaces: [...(namespaces as string[])].sort() },
    }),
  };
}

/** Returns the phase with its entries set to the given objects that match its selector. */
export function selectEntries(phase: Phase, objects: readonly unknown[]): Phase {
  const spec = phase.selector;
  if (spec === undefined) return phase;
  const entries: ObjectRef[] = [];
  for (const obj of objects) {
    const identity = readIdentity(obj);
    if (identity === undefined || identity.name === '') continue;
    if (!spec.kinds.some((gk) => gk.group === identity.group && gk.kind === identity.kind)) continue;
    if (spec.namespaces.length > 0 && !spec.namespaces.includes(identity.namespace)) continue;
    if (!matchesSelector(identity.labels, spec.selector)) continue;
    const version = identity.apiVersion.slice(identity.apiVersion.indexOf('/') + 1);
    entries.push({
      group: identity.group,
      kind: identity.kind,
      namespace: identity.namespace,
      name: identity.name,
      version,
    });
  }
  return buildPhase({ ...phase, entries, details: new Map(), selector: spec });
}

/**
 * Kubernetes label-selector semantics (apimachinery `LabelSelectorAsSelector`): every `matchLabels`
 * pair and every requirement must hold, so an empty selector matches everything. `labels` is an
 * object's `metadata.labels` as read from the cluster: only its own string values count, anything
 * else is an absent label. The one matcher for selector phases and kstatus' pod selection.
 */
export function matchesSelector(
  labels: Readonly<Record<string, unknown>> | undefined,
  selector: LabelSelector,
): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {}))
    if (readLabel(labels, key) !== value) return false;
  return (selector.matchExpressions ?? []).every((req) => matchesRequirement(labels, req));
}

function readLabel(labels: Readonly<Record<string, unknown>> | undefined, key: string): string | undefined {
  if (labels === undefined || !Object.hasOwn(labels, key)) return undefined;
  const value = labels[key];
  return typeof value === 'string' ? value : undefined;
}

function matchesRequirement(
  labels: Readonly<Record<string, unknown>> | undefined,
  req: LabelSelectorRequirement,
): boolean {
  const value = readLabel(labels, req.key);
  switch (req.operator) {
    case 'In':
      return value !== undefined && (req.values ?? []).includes(value);
    case 'NotIn':
      return value === undefined || !(req.values ?? []).includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
  }
}

/** A validated selector, or a message saying what is wrong. */
export function readLabelSelector(value: unknown): LabelSelector | string {
  if (!isRecord(value))
    return `selector must be an object with matchLabels/matchExpressions, got ${describeValue(value)}`;
  const selector: LabelSelector = {};
  if (value.matchLabels !== undefined) {
    if (!isRecord(value.matchLabels) || !Object.values(value.matchLabels).every((v) => typeof v === 'string')) {
      return 'selector.matchLabels must map strings to strings';
    }
    selector.matchLabels = readStringMap(value.matchLabels);
  }
  if (value.matchExpressions !== undefined) {
    if (!Array.isArray(value.matchExpressions)) return 'selector.matchExpressions must be a list';
    const requirements: LabelSelectorRequirement[] = [];
    for (const [index, item] of (value.matchExpressions as unknown[]).entries()) {
      const req = readRequirement(item);
      if (typeof req === 'string') return `selector.matchExpressions[${index}]: ${req}`;
      requirements.push(req);
    }
    selector.matchExpressions = requirements;
  }
  return selector;
}

function readRequirement(item: unknown): LabelSelectorRequirement | string {
  if (!isRecord(item) || typeof item.key !== 'string' || item.key === '') return 'needs a non-empty key';
  const operator = item.operator;
  if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
    return `operator must be one of In, NotIn, Exists, DoesNotExist, got ${String(operator)}`;
  }
  const values = item.values ?? [];
  if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return 'values must be a list of strings';
  const needsValues = operator === 'In' || operator === 'NotIn';
  if (needsValues && values.length === 0) return `operator ${operator} needs at least one value`;
  if (!needsValues && values.length > 0) return `operator ${operator} takes no values`;
  const req: LabelSelectorRequirement = { key: item.key, operator: operator as LabelSelectorRequirement['operator'] };
  if (needsValues) req.values = values as string[];
  return req;
}

/** Kinds as `group/Kind`, bare `Kind` for the core group, or `{group, kind}`. */
function readKinds(value: unknown): GroupKind[] | string {
  if (!Array.isArray(value) || value.length === 0) return 'kinds must be a non-empty list';
  const kinds: GroupKind[] = [];
  for (const item of value as unknown[]) {
    const gk = readGroupKind(item);
    if (gk === undefined) return `kind ${JSON.stringify(item)} is not "group/Kind", "Kind" or {group, kind}`;
    kinds.push(gk);
  }
  return kinds;
}
