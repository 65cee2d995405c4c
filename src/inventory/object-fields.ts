/** Narrowing helpers for inventory objects read from clusters or config, whose shape is not trusted. */

/** A JSON object (not null, not an array). */
export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is a string, otherwise `fallback`. */
export function readString(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

/** Keeps only the string-valued entries of a map (labels, annotations, ConfigMap data). */
export function readStringMap(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(value)) return out;
  for (const [key, item] of Object.entries(value)) if (typeof item === 'string') out[key] = item;
  return out;
}

/** Identity fields of a Kubernetes object. */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  group: string;
  name: string;
  namespace: string;
  labels: Record<string, string>;
}

/** Reads apiVersion, kind and metadata; `undefined` when the value is not a Kubernetes object. */
export function readIdentity(obj: unknown): ObjectIdentity | undefined {
  if (!isRecord(obj)) return undefined;
  const apiVersion = readString(obj.apiVersion);
  const kind = readString(obj.kind);
  const metadata = isRecord(obj.metadata) ? obj.metadata : {};
  const slash = apiVersion.indexOf('/');
  return {
    apiVersion,
    kind,
    group: slash === -1 ? '' : apiVersion.slice(0, slash),
    name: readString(metadata.name),
    namespace: readString(metadata.namespace),
    labels: readStringMap(metadata.labels),
  };
}

/** Describes a value for error messages without echoing it (it may be large or sensitive). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
