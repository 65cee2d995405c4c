/**
 * Decodes the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`) of request
 * bodies into the JSON objects the rest of the emulator stores. kubectl's typed clients send it for
 * built-in kinds (every `kubectl create configmap|secret|deployment|...`) and, unlike for CBOR,
 * client-go does not fall back to JSON when a server answers 415, so an apiserver stand-in has to
 * read it. The envelope is apimachinery's: the magic `k8s\0`, then a `runtime.Unknown` holding the
 * TypeMeta and the object's own message bytes.
 *
 * Only the messages in protobuf-schema.ts are known. A field the tables lack is skipped when it
 * holds its zero value (Go writes every non-pointer field); one that carries data fails the request
 * with {@link ProtobufBodyError} instead of being dropped without a word.
 */
import { PROTOBUF_MESSAGES, PROTOBUF_ROOTS } from './protobuf-schema.ts';
import type { KubeObject } from './types.ts';

/** The media type kube-apiserver uses for protobuf. */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from('k8s\0', 'latin1');

/** A protobuf body the emulator cannot turn into JSON (malformed, or outside its field tables). */
export class ProtobufBodyError extends Error {
  override name = 'ProtobufBodyError';
}

/** Whether a Content-Type header names the Kubernetes protobuf encoding. */
export function isProtobufContentType(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF_CONTENT_TYPE;
}

interface Field {
  name: string;
  type: string;
  repeated: boolean;
  map: boolean;
  keepZero: boolean;
}

interface WireValue {
  wire: 0 | 1 | 2 | 5;
  varint?: bigint;
  bytes?: Buffer;
}

const parsedFields = new Map<string, Map<number, Field>>();

function fieldsOf(message: string): Map<number, Field> {
  let fields = parsedFields.get(message);
  if (fields) return fields;
  const table = PROTOBUF_MESSAGES[message];
  if (!table) throw new ProtobufBodyError(`no protobuf field table for ${message}`);
  fields = new Map();
  for (const [no, notation] of Object.entries(table)) {
    const keepZero = notation.endsWith('!');
    const [name = '', rawType = ''] = (keepZero ? notation.slice(0, -1) : notation).split(':');
    const map = rawType.startsWith('map<');
    const repeated = rawType.startsWith('[]');
    const type = map ? rawType.slice(4, -1) : repeated ? rawType.slice(2) : rawType;
    fields.set(Number(no), { name, type, repeated, map, keepZero });
  }
  parsedFields.set(message, fields);
  return fields;
}

/** Splits a message into (field number, value) pairs in wire order. */
function readWire(buf: Buffer, message: string): [number, WireValue][] {
  const out: [number, WireValue][] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length || shift > 63n) throw new ProtobufBodyError(`truncated varint in ${message}`);
      const b = buf[i++] as number;
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if ((b & 0x80) === 0) return result;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push([no, { wire, varint: varint() }]);
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new ProtobufBodyError(`field ${no} of ${message} runs past the end of the body`);
      out.push([no, { wire, bytes: buf.subarray(i, i + len) }]);
      i += len;
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      if (i + len > buf.length) throw new ProtobufBodyError(`field ${no} of ${message} runs past the end of the body`);
      out.push([no, { wire, bytes: buf.subarray(i, i + len) }]);
      i += len;
    } else throw new ProtobufBodyError(`unsupported wire type ${wire} in field ${no} of ${message}`);
  }
  return out;
}

function isZeroWire(v: WireValue): boolean {
  return v.wire === 0 ? v.varint === 0n : (v.bytes?.length ?? 0) === 0;
}

function expectBytes(v: WireValue, where: string): Buffer {
  if (v.wire !== 2 || !v.bytes) throw new ProtobufBodyError(`${where}: expected a length-delimited value`);
  return v.bytes;
}

function expectVarint(v: WireValue, where: string): bigint {
  if (v.wire !== 0 || v.varint === undefined) throw new ProtobufBodyError(`${where}: expected a varint`);
  return v.varint;
}

function decodeTime(buf: Buffer): string | null {
  let seconds = 0n;
  let nanos = 0n;
  for (const [no, v] of readWire(buf, 'Time')) {
    if (no === 1) seconds = BigInt.asIntN(64, expectVarint(v, 'Time.seconds'));
    if (no === 2) nanos = expectVarint(v, 'Time.nanos');
  }
  if (seconds === 0n && nanos === 0n) return null;
  return new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function decodeIntOrString(buf: Buffer): number | string {
  let type = 0n;
  let intVal = 0;
  let strVal = '';
  for (const [no, v] of readWire(buf, 'IntOrString')) {
    if (no === 1) type = expectVarint(v, 'IntOrString.type');
    if (no === 2) intVal = Number(BigInt.asIntN(32, expectVarint(v, 'IntOrString.intVal')));
    if (no === 3) strVal = expectBytes(v, 'IntOrString.strVal').toString('utf8');
  }
  return type === 1n ? strVal : intVal;
}

/** One value of a field's type; undefined means "zero value, leave the field out". */
function decodeValue(type: string, v: WireValue, where: string): unknown {
  switch (type) {
    case 'string':
      return expectBytes(v, where).toString('utf8');
    case 'bytes':
      return expectBytes(v, where).toString('base64');
    case 'int':
      return Number(BigInt.asIntN(64, expectVarint(v, where)));
    case 'bool':
      return expectVarint(v, where) !== 0n;
    case 'Time':
      return decodeTime(expectBytes(v, where));
    case 'Quantity':
      return (
        readWire(expectBytes(v, where), 'Quantity')
          .find(([no]) => no === 1)?.[1]
          .bytes?.toString('utf8') ?? ''
      );
    case 'IntOrString':
      return decodeIntOrString(expectBytes(v, where));
    default:
      return decodeMessage(expectBytes(v, where), type);
  }
}

function isEmptyValue(value: unknown): boolean {
  if (value === null || value === undefined || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

function decodeMapEntry(buf: Buffer, valueType: string, where: string): [string, unknown] {
  let key = '';
  let value: unknown = valueType === 'string' || valueType === 'bytes' || valueType === 'Quantity' ? '' : undefined;
  for (const [no, v] of readWire(buf, `${where} entry`)) {
    if (no === 1) key = expectBytes(v, `${where} key`).toString('utf8');
    if (no === 2) value = decodeValue(valueType, v, `${where}[${key}]`);
  }
  return [key, value];
}

/** Decodes one message into a JSON object, following its field table. */
function decodeMessage(buf: Buffer, message: string): Record<string, unknown> {
  const fields = fieldsOf(message);
  const out: Record<string, unknown> = {};
  for (const [no, v] of readWire(buf, message)) {
    const field = fields.get(no);
    const where = `${message}.${field?.name ?? String(no)}`;
    if (!field) {
      if (isZeroWire(v)) continue;
      throw new ProtobufBodyError(
        `field ${no} of ${message} is not known to the emulator's protobuf decoder; send the object as JSON (for example with kubectl create -f or apply -f)`,
      );
    }
    if (field.map) {
      const [key, value] = decodeMapEntry(expectBytes(v, where), field.type, where);
      const m = (out[field.name] ??= {}) as Record<string, unknown>;
      m[key] = value;
      continue;
    }
    const value = decodeValue(field.type, v, where);
    if (field.repeated) {
      ((out[field.name] ??= []) as unknown[]).push(value);
      continue;
    }
    if (field.name === '...') {
      Object.assign(out, value);
      continue;
    }
    if (value === null || (!field.keepZero && isEmptyValue(value))) continue;
    out[field.name] = value;
  }
  return out;
}

/**
 * Turns a protobuf request body into the JSON object it encodes. Throws ProtobufBodyError for a
 * body without the `k8s\0` envelope, a kind outside the tables, or a field that cannot be read.
 */
export function decodeProtobufObject(body: Buffer): KubeObject {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new ProtobufBodyError('the protobuf body does not start with the Kubernetes envelope prefix k8s\\x00');
  }
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  for (const [no, v] of readWire(body.subarray(MAGIC.length), 'Unknown')) {
    if (no === 1) {
      for (const [tno, tv] of readWire(expectBytes(v, 'TypeMeta'), 'TypeMeta')) {
        if (tno === 1) apiVersion = expectBytes(tv, 'TypeMeta.apiVersion').toString('utf8');
        if (tno === 2) kind = expectBytes(tv, 'TypeMeta.kind').toString('utf8');
      }
    } else if (no === 2) raw = expectBytes(v, 'Unknown.raw');
    else if ((no === 3 || no === 4) && !isZeroWire(v))
      throw new ProtobufBodyError('content-encoded protobuf bodies are not supported');
  }
  const root = PROTOBUF_ROOTS[`${apiVersion}/${kind}`];
  if (!root)
    throw new ProtobufBodyError(
      `the emulator cannot decode ${kind || 'an object without a kind'} (${apiVersion || 'no apiVersion'}) from protobuf; send it as JSON`,
    );
  return { apiVersion, kind, ...decodeMessage(raw ?? Buffer.alloc(0), root) };
}
