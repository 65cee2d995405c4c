/**
 * Field readers with kstatus' semantics (cli-utils `pkg/kstatus/status/util.go` and apimachinery's
 * `unstructured.Nested*`). Lenient readers (`readInt`, `readString`, `readBool`) return the default on
 * a missing path, a `null`, or a wrong-typed value, exactly like kstatus' `GetIntField` and friends.
 * Strict readers (`readStrictInt`, `readStrictString`) mirror `unstructured.NestedInt64`/`NestedString`:
 * a wrong type is a {@link FieldError}, which the engine reports as Unknown/MALFORMED_OBJECT.
 */

/** A decoded JSON object (Go's `map[string]interface{}`). */
export type JsonRecord = Record<string, unknown>;

/** Why a field could not be read; carried as data, never thrown. `message` uses kstatus' wording. */
export class FieldError {
  constructor(readonly message: string) {}
}

/** Marker for "the path does not exist" (Go's `found == false`). */
export const MISSING: unique symbol = Symbol('missing');

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Go's `%T` for a value decoded from JSON: apimachinery decodes integral numbers to int64 and the
 * rest to float64. Integers beyond 2^53 are not exact in JS, so they count as float64 here.
 */
export function goTypeName(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isSafeInteger(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return '[]interface {}';
  if (typeof value === 'object') return 'map[string]interface {}';
  return typeof value;
}

/** Go's `reflect.Kind` name, as apimachinery's converter prints it ("cannot restore slice from map"). */
export function goKindName(value: unknown): string {
  if (Array.isArray(value)) return 'slice';
  if (isRecord(value)) return 'map';
  return goTypeName(value);
}

const MAX_VALUE_TEXT = 80;

/** Go's `%v` of a JSON value, shortened so a huge field cannot flood a status message. */
export function describeGoValue(value: unknown): string {
  let text: string;
  if (value === null || value === undefined) text = '<nil>';
  else if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (Array.isArray(value)) text = `[${value.length} items]`;
  else text = 'map[...]';
  return text.length > MAX_VALUE_TEXT ? `${text.slice(0, MAX_VALUE_TEXT)}...` : text;
}

/** apimachinery's `jsonPath`: `.a.b.c` for the first `count` fields. */
function jsonPath(path: readonly string[], count: number): string {
  return `.${path.slice(0, count).join('.')}`;
}

/**
 * Walks `path` like `unstructured.NestedFieldNoCopy`: a `null` on the way means "not found", a
 * non-object on the way is an accessor error, and a `null` at the end is found (value `null`).
 */
export function readPath(obj: JsonRecord, path: readonly string[]): unknown {
  let value: unknown = obj;
  for (let i = 0; i < path.length; i++) {
    if (value === null || value === undefined) return MISSING;
    if (!isRecord(value)) {
      return new FieldError(
        `${jsonPath(path, i + 1)} accessor error: ${describeGoValue(value)} is of the type ${goTypeName(value)}, expected map[string]interface{}`,
      );
    }
    const next: unknown = value[path[i] as string];
    if (next === undefined) return MISSING;
    value = next;
  }
  return value;
}

/** kstatus `GetIntField`: an exact integer at `path`, else `defaultValue`. */
export function readInt(obj: JsonRecord, path: readonly string[], defaultValue: number): number {
  const value = readPath(obj, path);
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : defaultValue;
}

/** kstatus `GetStringField`: a string at `path`, else `defaultValue`. */
export function readString(obj: JsonRecord, path: readonly string[], defaultValue: string): string {
  const value = readPath(obj, path);
  return typeof value === 'string' ? value : defaultValue;
}

/** kstatus `GetBoolField`: a boolean at `path`, else `defaultValue`. */
export function readBool(obj: JsonRecord, path: readonly string[], defaultValue: boolean): boolean {
  const value = readPath(obj, path);
  return typeof value === 'boolean' ? value : defaultValue;
}

/** Splits kstatus' dotted field path (`.spec.replicas`), dropping the leading empty segment. */
export function splitFieldPath(fieldPath: string): string[] {
  const fields = fieldPath.split('.');
  return fields[0] === '' ? fields.slice(1) : fields;
}

/** kstatus `GetIntField` with its dotted-path signature, for callers porting kstatus code. */
export function readIntField(obj: JsonRecord, fieldPath: string, defaultValue: number): number {
  return readInt(obj, splitFieldPath(fieldPath), defaultValue);
}

/** kstatus `GetStringField` with its dotted-path signature. */
export function readStringField(obj: JsonRecord, fieldPath: string, defaultValue: string): string {
  return readString(obj, splitFieldPath(fieldPath), defaultValue);
}

/**
 * `unstructured.NestedInt64`: `undefined` when absent, the integer when present, a FieldError when
 * present with another type (including `null`, a fraction, or an integer too large to be exact).
 */
export function readStrictInt(obj: JsonRecord, path: readonly string[]): number | undefined | FieldError {
  const value = readPath(obj, path);
  if (value === MISSING) return undefined;
  if (value instanceof FieldError) return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  return new FieldError(
    `${jsonPath(path, path.length)} accessor error: ${describeGoValue(value)} is of the type ${goTypeName(value)}, expected int64`,
  );
}

/**
 * `unstructured.NestedString`. A `Date` counts as its RFC 3339 text, because typed objects from
 * @kubernetes/client-node carry timestamps as `Date`s where the JSON had strings.
 */
export function readStrictString(obj: JsonRecord, path: readonly string[]): string | undefined | FieldError {
  const value = readPath(obj, path);
  if (value === MISSING) return undefined;
  if (value instanceof FieldError) return value;
  if (typeof value === 'string') return value;
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
  return new FieldError(
    `${jsonPath(path, path.length)} accessor error: ${describeGoValue(value)} is of the type ${goTypeName(value)}, expected string`,
  );
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[T](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads a timestamp the way metav1.Time unmarshals it: RFC 3339 text (or a `Date`), and anything
 * else (missing, wrong type, unparsable) is the zero time, reported here as `undefined`.
 */
export function readTimestampMillis(obj: JsonRecord, path: readonly string[]): number | undefined {
  const value = readPath(obj, path);
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (typeof value !== 'string' || !RFC3339.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
