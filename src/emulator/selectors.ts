/**
 * Label and field selectors with kube-apiserver's syntax and semantics
 * (k8s.io/apimachinery `pkg/labels/selector.go`, `pkg/fields/selector.go`).
 */

/** One parsed label requirement. */
export type LabelRequirement =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

/** One parsed field requirement (only equality and inequality exist for fields). */
export interface FieldRequirement {
  op: 'eq' | 'neq';
  path: string;
  value: string;
}

/** A parse result: requirements, or the message the apiserver would answer 400 with. */
export type ParseResult<T> = { ok: true; value: T[] } | { ok: false; message: string };

const KEY = /^([a-z0-9A-Z]([-a-z0-9A-Z.]*[a-z0-9A-Z])?\/)?[a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?$/;
const VALUE = /^([a-z0-9A-Z]([-a-z0-9A-Z_.]*[a-z0-9A-Z])?)?$/;

// Commas inside `in (a,b)` do not separate requirements.
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

function parseOneLabel(part: string): LabelRequirement | string {
  const setMatch = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
  if (setMatch) {
    const key = setMatch[1] ?? '';
    const values = (setMatch[3] ?? '').split(',').map((v) => v.trim());
    if (!KEY.test(key)) return `invalid label key "${key}"`;
    const bad = values.find((v) => !VALUE.test(v));
    if (bad !== undefined) return `invalid label value: "${bad}"`;
    return { op: setMatch[2] === 'in' ? 'in' : 'notin', key, values };
  }
  const eqMatch = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
  if (eqMatch) {
    const key = eqMatch[1] ?? '';
    const value = (eqMatch[3] ?? '').trim();
    if (!KEY.test(key)) return `invalid label key "${key}"`;
    if (!VALUE.test(value)) return `invalid label value: "${value}"`;
    return { op: eqMatch[2] === '!=' ? 'neq' : 'eq', key, value };
  }
  if (part.startsWith('!')) {
    const key = part.slice(1).trim();
    return KEY.test(key) ? { op: 'notexists', key } : `invalid label key "${key}"`;
  }
  return KEY.test(part) ? { op: 'exists', key: part } : `unable to parse requirement: "${part}"`;
}

/** Parses a `labelSelector` query value. An empty string selects everything. */
export function parseLabelSelector(text: string): ParseResult<LabelRequirement> {
  if (text.trim() === '') return { ok: true, value: [] };
  const out: LabelRequirement[] = [];
  for (const part of splitTopLevel(text)) {
    if (part === '')
      return { ok: false, message: `unable to parse requirement: found '', expected: identifier in "${text}"` };
    const parsed = parseOneLabel(part);
    if (typeof parsed === 'string') return { ok: false, message: `unable to parse requirement: ${parsed}` };
    out.push(parsed);
  }
  return { ok: true, value: out };
}

/** Whether labels satisfy every requirement (kube semantics: `!=` and `notin` match absent keys). */
export function matchesLabels(
  requirements: readonly LabelRequirement[],
  labels: Record<string, string> | undefined,
): boolean {
  for (const r of requirements) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const value = has ? labels[r.key] : undefined;
    switch (r.op) {
      case 'eq':
        if (value !== r.value) return false;
        break;
      case 'neq':
        if (value === r.value) return false;
        break;
      case 'in':
        if (value === undefined || !r.values.includes(value)) return false;
        break;
      case 'notin':
        if (value !== undefined && r.values.includes(value)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * Parses a `fieldSelector` value. Only `metadata.name`, `metadata.namespace` and the given extra
 * paths are accepted, as the apiserver rejects any field its type does not index.
 */
export function parseFieldSelector(text: string, allowedPaths: readonly string[]): ParseResult<FieldRequirement> {
  if (text.trim() === '') return { ok: true, value: [] };
  const out: FieldRequirement[] = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) return { ok: false, message: `invalid selector: '${text}'; can't understand '${part}'` };
    const path = m[1] ?? '';
    if (path !== 'metadata.name' && path !== 'metadata.namespace' && !allowedPaths.includes(path)) {
      return { ok: false, message: `field label not supported: ${path}` };
    }
    out.push({ op: m[2] === '!=' ? 'neq' : 'eq', path, value: (m[3] ?? '').trim() });
  }
  return { ok: true, value: out };
}

function readPath(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}

/** Whether an object satisfies every field requirement (absent fields read as ''). */
export function matchesFields(requirements: readonly FieldRequirement[], obj: unknown): boolean {
  return requirements.every((r) => (readPath(obj, r.path) === r.value) === (r.op === 'eq'));
}
