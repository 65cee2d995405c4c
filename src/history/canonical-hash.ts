/**
 * Content addressing: a stable JSON text (object keys sorted at every level) and its sha256, so two
 * reads of the same document hash equal whatever order the API server wrote the keys in.
 */
import { createHash } from 'node:crypto';

/** JSON text with object keys sorted recursively; `undefined` members are left out, as JSON does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Hex sha256 of the canonical JSON of `value`. */
export function hashDocument(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Hex sha256 of a list of strings, order-sensitive and unambiguous. */
export function hashStrings(values: readonly string[]): string {
  const hash = createHash('sha256');
  for (const value of values) hash.update(`${value.length}:${value}`);
  return hash.digest('hex');
}
