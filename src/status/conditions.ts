/**
 * `status.conditions` read the way kstatus reads them: through apimachinery's unstructured converter
 * into `{type, status, reason, message}` (cli-utils `util.go`, `GetObjectWithConditions`).
 *
 * The list is validated once and then read in place, so a Current object costs no allocation.
 */
import { FieldError, goKindName, goTypeName, isRecord } from './read.ts';
import type { JsonRecord } from './read.ts';

/** One condition as kstatus sees it; absent or `null` fields read as `''`. */
export interface BasicCondition {
  type?: string | null;
  status?: string | null;
  reason?: string | null;
  message?: string | null;
}

/** A validated conditions list. Elements may be `null` (the converter turns those into empty conditions). */
export type ConditionList = readonly (BasicCondition | null)[];

const EMPTY: ConditionList = Object.freeze([]);

/** Go field types of BasicCondition, in declaration order, as the converter names them in errors. */
const FIELDS: readonly (readonly [keyof BasicCondition, string])[] = [
  ['type', 'string'],
  ['status', 'v1.ConditionStatus'],
  ['reason', 'string'],
  ['message', 'string'],
];

function isStringOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

function describeFieldError(element: JsonRecord, index: number): FieldError {
  for (const [field, goType] of FIELDS) {
    const value = element[field];
    if (!isStringOrAbsent(value)) {
      return new FieldError(
        `cannot convert ${goTypeName(value)} to ${goType} (at .status.conditions[${index}].${field})`,
      );
    }
  }
  return new FieldError(`undecodable condition (at .status.conditions[${index}])`);
}

/**
 * Decodes `status.conditions`. Missing or `null` status/conditions give an empty list; a non-object
 * `status`, a non-list `conditions`, a non-object element or a non-string field give the converter's
 * error text, followed by where it happened.
 */
export function decodeConditions(obj: JsonRecord): ConditionList | FieldError {
  const status = obj['status'];
  if (status === undefined || status === null) return EMPTY;
  if (!isRecord(status)) return new FieldError(`cannot restore struct from: ${goKindName(status)} (at .status)`);
  const list = status['conditions'];
  if (list === undefined || list === null) return EMPTY;
  if (!Array.isArray(list)) {
    return new FieldError(`cannot restore slice from ${goKindName(list)} (at .status.conditions)`);
  }
  for (let i = 0; i < list.length; i++) {
    const element: unknown = list[i];
    if (element === null || element === undefined) continue;
    if (!isRecord(element)) {
      return new FieldError(`cannot restore struct from: ${goKindName(element)} (at .status.conditions[${i}])`);
    }
    // Checked field by field without a loop: this runs for every condition of every object.
    if (
      isStringOrAbsent(element['type']) &&
      isStringOrAbsent(element['status']) &&
      isStringOrAbsent(element['reason']) &&
      isStringOrAbsent(element['message'])
    ) {
      continue;
    }
    return describeFieldError(element, i);
  }
  return list as ConditionList;
}

/** A condition's type, `''` when absent. */
export function typeOf(c: BasicCondition | null): string {
  return c?.type ?? '';
}

/** A condition's status, `''` when absent. */
export function statusOf(c: BasicCondition | null): string {
  return c?.status ?? '';
}

/** A condition's reason, `''` when absent. */
export function reasonOf(c: BasicCondition | null): string {
  return c?.reason ?? '';
}

/** A condition's message, `''` when absent. */
export function messageOf(c: BasicCondition | null): string {
  return c?.message ?? '';
}

/** kstatus `getConditionWithStatus`: the first condition with this type and status. */
export function findCondition(list: ConditionList, type: string, status: string): BasicCondition | undefined {
  for (const c of list) {
    if (c !== null && c.type === type && c.status === status) return c;
  }
  return undefined;
}
