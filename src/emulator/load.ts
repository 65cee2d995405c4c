/**
 * Reading Kubernetes objects from YAML (multi-document) or JSON (object, array or `*List`).
 */
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from './types.ts';

/** Error for files that cannot be read or parsed; the message names the file and document. */
export class ManifestError extends Error {
  override name = 'ManifestError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function flatten(value: unknown, where: string, out: KubeObject[]): void {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((v, i) => flatten(v, `${where}[${i}]`, out));
    return;
  }
  if (!isObject(value)) throw new ManifestError(`${where}: expected a Kubernetes object, got ${typeof value}`);
  if (typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items'])) {
    flatten(value['items'], `${where}.items`, out);
    return;
  }
  if (typeof value['apiVersion'] !== 'string' || typeof value['kind'] !== 'string') {
    throw new ManifestError(`${where}: object has no apiVersion/kind`);
  }
  out.push(value as KubeObject);
}

/** Parses manifest text; `name` is used in error messages. */
export function parseManifests(text: string, name: string): KubeObject[] {
  const out: KubeObject[] = [];
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new ManifestError(`${name}: invalid JSON: ${(e as Error).message}`);
    }
    flatten(parsed, name, out);
    return out;
  }
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0)
      throw new ManifestError(`${name} (document ${i + 1}): invalid YAML: ${doc.errors[0]?.message ?? 'parse error'}`);
    flatten(doc.toJS(), `${name} (document ${i + 1})`, out);
  });
  return out;
}

/** Reads and parses a manifest file. */
export async function readManifestFile(path: string): Promise<KubeObject[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ManifestError(`cannot read ${path}: ${(e as Error).message}`);
  }
  return parseManifests(text, path);
}
