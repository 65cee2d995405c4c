/**
 * The list/watch query parameters: selectors, limit, continue tokens and resourceVersion.
 */
import { makeBadRequest, makeGone, type ApiFailure } from './api-status.ts';
import type { ResourceType } from './catalog.ts';
import { readMeta } from './object-store.ts';
import {
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  type FieldRequirement,
  type LabelRequirement,
} from './selectors.ts';
import type { KubeObject } from './types.ts';

/** Parsed selectors of a list or watch. */
export interface Selection {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

/** Parses `labelSelector` and `fieldSelector` (plus the name a legacy watch path names). */
export function parseSelection(params: URLSearchParams, type: ResourceType, name?: string): Selection | ApiFailure {
  const labels = parseLabelSelector(params.get('labelSelector') ?? '');
  if (!labels.ok) return makeBadRequest(labels.message);
  const fields = parseFieldSelector(params.get('fieldSelector') ?? '', type.fieldPaths);
  if (!fields.ok) return makeBadRequest(fields.message);
  const fieldReqs = fields.value;
  if (name !== undefined) fieldReqs.push({ op: 'eq', path: 'metadata.name', value: name });
  return { labels: labels.value, fields: fieldReqs };
}

/** Whether an object is selected. */
export function isSelected(sel: Selection, obj: KubeObject): boolean {
  if (sel.labels.length > 0) {
    const labels = readMeta(obj)['labels'];
    if (
      !matchesLabels(
        sel.labels,
        typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : undefined,
      )
    )
      return false;
  }
  return sel.fields.length === 0 || matchesFields(sel.fields, obj);
}

/** Decoded continue token: the revision of the first page and the key of the last item sent. */
export interface ContinueToken {
  rv: number;
  start: string;
}

/** Encodes a continue token (opaque base64 JSON, as the apiserver's is opaque). */
export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'emulator/v1', rv: token.rv, start: token.start })).toString('base64url');
}

/** Decodes and checks a continue token against compaction. */
export function decodeContinue(text: string, compactedRv: number): ContinueToken | ApiFailure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return makeBadRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
    );
  }
  const p = parsed as Record<string, unknown>;
  if (
    typeof p !== 'object' ||
    p === null ||
    p['v'] !== 'emulator/v1' ||
    typeof p['rv'] !== 'number' ||
    typeof p['start'] !== 'string'
  ) {
    return makeBadRequest('continue key is not valid: server does not recognize this encoded version');
  }
  if (p['rv'] < compactedRv) {
    return makeGone(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  }
  return { rv: p['rv'], start: p['start'] };
}

/** Parses a non-negative integer parameter; undefined when absent. */
export function parseCount(params: URLSearchParams, key: string): number | undefined | ApiFailure {
  const raw = params.get(key);
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) return makeBadRequest(`invalid value for ${key}: ${raw}`);
  return n;
}

/** Parses a resourceVersion parameter ('' or absent = undefined). */
export function parseResourceVersion(params: URLSearchParams): number | undefined | ApiFailure {
  const raw = params.get('resourceVersion');
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) return makeBadRequest(`invalid resource version: ${raw}`);
  return n;
}
