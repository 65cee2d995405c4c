/**
 * kstatus' `Compute` after the deletion check (cli-utils `status.go`): generation, then the standard
 * conditions, then the built-in rule for the group and kind, then the Ready fallback.
 */
import { decodeConditions } from './conditions.ts';
import { checkGeneration, checkReadyOrDefault, checkStandardConditions } from './generic.ts';
import { FieldError } from './read.ts';
import type { JsonRecord } from './read.ts';
import { malformedStatus } from './result.ts';
import { findRule } from './rules/index.ts';
import type { StatusResult } from './types.ts';

/** Everything `Compute` does once the object is known not to be Terminating. */
export function computeAfterDeletion(obj: JsonRecord, nowMs: number): StatusResult {
  const generation = checkGeneration(obj);
  if (generation !== undefined) return generation;
  const conditions = decodeConditions(obj);
  if (conditions instanceof FieldError) return malformedStatus(conditions.message);
  const standard = checkStandardConditions(conditions);
  if (standard !== undefined) return standard;
  const rule = findRule(obj);
  return rule === undefined ? checkReadyOrDefault(conditions) : rule(obj, conditions, { nowMs });
}

/** Epoch milliseconds of a `now` given as a Date or a number; NaN for anything else. */
export function toMillis(now: unknown): number {
  if (typeof now === 'number') return now;
  if (now instanceof Date) return now.getTime();
  return Number.NaN;
}

/** A short description of a value that should have been an object, for error messages. */
export function describeNonObject(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing (undefined)';
  if (Array.isArray(value)) return `an array of ${value.length} items`;
  if (typeof value === 'string') return `a string (${value.length} characters)`;
  return `a ${typeof value} (${String(value).slice(0, 40)})`;
}
