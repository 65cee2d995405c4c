/** Loads the kstatus conformance fixtures (transcribed from cli-utils' tests) and fills in times. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('../../fixtures/kstatus/', import.meta.url));

/** One entry of `cases.json` (see the shared notes §2.2 for the format). */
export interface KstatusCase {
  name: string;
  function: 'Compute' | 'Augment' | 'GetIntField' | 'GetStringField';
  object: Record<string, unknown>;
  expectedStatus?: string;
  expectedConditions?: { type: string; status: string; reason: string }[] | null;
  absentConditionTypes?: string[] | null;
  derivedMessage?: string;
  derivedConditions?: Record<string, string>[];
  expectedConditionCount?: number;
  expectedObject?: Record<string, unknown>;
  args?: { fieldPath: string; default: number | string };
  expected?: number | string;
}

/** One entry of `aggregator-cases.json`. */
export interface AggregatorCase {
  name: string;
  desired: string;
  statuses: { id: string; status: string }[];
  expected: string;
}

/** The fixed evaluation time every conformance case runs at. */
export const NOW = new Date('2026-03-01T12:00:00Z');

function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Replaces the fixtures' time markers with times relative to {@link NOW}. */
export function fillTimes<T>(value: T): T {
  const text = JSON.stringify(value)
    .replaceAll('__NOW_MINUS_1MIN_RFC3339__', rfc3339(NOW.getTime() - 60_000))
    .replaceAll('__NOW_RFC3339__', rfc3339(NOW.getTime()));
  return JSON.parse(text) as T;
}

export function loadCases(): KstatusCase[] {
  return fillTimes(JSON.parse(readFileSync(`${dir}cases.json`, 'utf8')) as KstatusCase[]);
}

export function loadAggregatorCases(): AggregatorCase[] {
  return JSON.parse(readFileSync(`${dir}aggregator-cases.json`, 'utf8')) as AggregatorCase[];
}

/** Realistic objects as an API server returns them, all Current, keyed by short name. */
export type ObjectName =
  | 'deployment'
  | 'statefulset'
  | 'daemonset'
  | 'replicaset'
  | 'pod'
  | 'pvc'
  | 'service'
  | 'job'
  | 'cronjob'
  | 'pdb'
  | 'crd'
  | 'configmap'
  | 'secret'
  | 'kustomization'
  | 'namespace';

const objects = JSON.parse(readFileSync(`${dir}objects.json`, 'utf8')) as Record<ObjectName, Record<string, unknown>>;

/** A fresh copy of a fixture object. */
export function fixture(name: ObjectName): Record<string, unknown> {
  return structuredClone(objects[name]);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386 JSON merge patch (`null` deletes a key), applied to a copy. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** A fixture object with a merge patch applied. */
export function patched(name: ObjectName, patch: Record<string, unknown>): Record<string, unknown> {
  return mergePatch(fixture(name), patch) as Record<string, unknown>;
}
