/**
 * Label selectors (`metav1.LabelSelector`: `matchLabels` and `matchExpressions`) read from a pod
 * controller's `spec.selector` and validated the way apimachinery's `LabelSelectorAsSelector` does,
 * with its error wording. Matching is inventory's `matchesSelector`, the one label matcher.
 */
import type { LabelSelector, LabelSelectorRequirement } from '../inventory/types.ts';
import { describeGoValue, goTypeName, isRecord, MISSING, readPath } from './read.ts';
import type { JsonRecord } from './read.ts';

/**
 * Parse outcome: a selector, or why the object's selector is unusable. `matchLabels` pairs come back
 * as `In` requirements of one value, as apimachinery turns them into requirements.
 */
export type SelectorParse = { ok: true; selector: LabelSelector } | { ok: false; error: string };

const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkKey(key: string): string | undefined {
  const slash = key.lastIndexOf('/');
  const name = slash === -1 ? key : key.slice(slash + 1);
  const prefix = slash === -1 ? undefined : key.slice(0, slash);
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) return `invalid label key "${key}"`;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `invalid label key "${key}": prefix must be a DNS subdomain`;
  }
  return undefined;
}

function checkValue(value: string): string | undefined {
  if (value === '') return undefined;
  return value.length <= 63 && NAME.test(value) ? undefined : `invalid label value "${value}"`;
}

function parseMatchLabels(value: unknown, out: LabelSelectorRequirement[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value))
    return `cannot unmarshal ${goTypeName(value)} into LabelSelector.matchLabels of type map[string]string`;
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (typeof v !== 'string')
      return `cannot unmarshal ${goTypeName(v)} into LabelSelector.matchLabels["${key}"] of type string`;
    const problem = checkKey(key) ?? checkValue(v);
    if (problem !== undefined) return problem;
    out.push({ key, operator: 'In', values: [v] });
  }
  return undefined;
}

function parseExpression(expr: unknown, index: number, out: LabelSelectorRequirement[]): string | undefined {
  const at = `matchExpressions[${index}]`;
  if (!isRecord(expr)) return `${at}: ${describeGoValue(expr)} is not an object`;
  const { key, operator, values } = expr;
  if (typeof key !== 'string') return `${at}.key must be a string`;
  const problem = checkKey(key);
  if (problem !== undefined) return problem;
  const list: string[] = [];
  if (values !== undefined && values !== null) {
    if (!Array.isArray(values)) return `${at}.values must be a list of strings`;
    for (const v of values) {
      if (typeof v !== 'string') return `${at}.values must be a list of strings`;
      const bad = checkValue(v);
      if (bad !== undefined) return bad;
      list.push(v);
    }
  }
  switch (operator) {
    case 'In':
    case 'NotIn':
      if (list.length === 0) return "for 'in', 'notin' operators, values set can't be empty";
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (list.length > 0) return 'values set must be empty for exists and does not exist';
      break;
    default:
      return `${JSON.stringify(typeof operator === 'string' ? operator : describeGoValue(operator))} is not a valid label selector operator`;
  }
  out.push({ key, operator, values: list });
  return undefined;
}

/**
 * Parses a label selector object. kstatus' pod-controller readers use `spec.selector`; see
 * {@link parseObjectSelector}.
 */
export function parseLabelSelector(value: unknown): SelectorParse {
  if (!isRecord(value)) return { ok: false, error: `selector must be an object, got ${goTypeName(value)}` };
  const requirements: LabelSelectorRequirement[] = [];
  const labelsProblem = parseMatchLabels(value['matchLabels'], requirements);
  if (labelsProblem !== undefined) return { ok: false, error: labelsProblem };
  const expressions = value['matchExpressions'];
  if (expressions !== undefined && expressions !== null) {
    if (!Array.isArray(expressions)) return { ok: false, error: 'matchExpressions must be a list' };
    for (let i = 0; i < expressions.length; i++) {
      const problem = parseExpression(expressions[i], i, requirements);
      if (problem !== undefined) return { ok: false, error: problem };
    }
  }
  return { ok: true, selector: { matchExpressions: requirements } };
}

const SPEC_SELECTOR = ['spec', 'selector'] as const;

/**
 * The object's `spec.selector`, read as kstatus' readers read it: absent is the error
 * `no selector found` (which makes kstatus report the controller Unknown).
 */
export function parseObjectSelector(obj: JsonRecord): SelectorParse {
  const value = readPath(obj, SPEC_SELECTOR);
  if (value === MISSING) return { ok: false, error: 'no selector found' };
  if (!isRecord(value)) {
    const text = `.spec.selector accessor error: ${describeGoValue(value)} is of the type ${goTypeName(value)}, expected map[string]interface{}`;
    return { ok: false, error: text };
  }
  return parseLabelSelector(value);
}
