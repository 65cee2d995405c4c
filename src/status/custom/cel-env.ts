import { Environment, Optional } from '@marcbachmann/cel-js';

/** Namespace receivers, so `sets.contains(...)` and `base64.encode(...)` parse as in cel-go. */
class SetsNamespace {}
class Base64Namespace {}
class StringsNamespace {}

type CelValue = unknown;

/** CEL equality across int/double (Flux enables cross-type numeric comparisons) and containers. */
function isCelEqual(a: CelValue, b: CelValue): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) {
    return Number(a) === Number(b);
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => isCelEqual(item, b[i]));
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    return a.length === b.length && a.every((byte, i) => byte === b[i]);
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keysA = Object.keys(a);
    const recordB = b as Record<string, CelValue>;
    return (
      keysA.length === Object.keys(b).length &&
      keysA.every((key) => key in recordB && isCelEqual((a as Record<string, CelValue>)[key], recordB[key]))
    );
  }
  return a === b;
}

function includesCel(list: readonly CelValue[], value: CelValue): boolean {
  return list.some((item) => isCelEqual(item, value));
}

/** A small `string.format` (cel-go ext.Strings): %s %d %f %e %x %X %o %b and %%. */
function formatCelString(template: string, args: readonly CelValue[]): string {
  let next = 0;
  return template.replace(/%(\.\d+)?([sdfeExXob%])/g, (_match, precision: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (next >= args.length) throw new Error(`index ${next} out of range`);
    const value = args[next++];
    const digits = precision === undefined ? 6 : Number(precision.slice(1));
    switch (verb) {
      case 'd':
        return String(typeof value === 'number' ? Math.trunc(value) : value);
      case 'f':
        return Number(value).toFixed(digits);
      case 'e':
      case 'E':
        return Number(value)
          .toExponential(digits)
          .replace(/e([+-])(\d)$/, 'e$10$2');
      case 'x':
        return typeof value === 'string' ? Buffer.from(value).toString('hex') : BigInt(value as bigint).toString(16);
      case 'X':
        return typeof value === 'string'
          ? Buffer.from(value).toString('hex').toUpperCase()
          : BigInt(value as bigint)
              .toString(16)
              .toUpperCase();
      case 'o':
        return BigInt(value as bigint).toString(8);
      case 'b':
        return BigInt(value as bigint).toString(2);
      default:
        return typeof value === 'string'
          ? value
          : JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
    }
  });
}

/**
 * Builds the CEL environment Flux uses for health checks (fluxcd/pkg `runtime/cel/expression.go`):
 * undeclared variables (the activation is the object's top-level map), optional syntax, homogeneous
 * aggregate literals, and the helpers of cel-go's `ext.Strings`, `ext.Sets` and `ext.Encoders`
 * that cel-js lacks, plus the optional-returning `first()`/`last()` on lists.
 */
export function createFluxCelEnvironment(): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: true,
    homogeneousAggregateLiterals: true,
    enableOptionalTypes: true,
  });
  env.registerType('SetsNamespace', SetsNamespace);
  env.registerConstant('sets', 'SetsNamespace', new SetsNamespace());
  env.registerType('Base64Namespace', Base64Namespace);
  env.registerConstant('base64', 'Base64Namespace', new Base64Namespace());
  env.registerType('StringsNamespace', StringsNamespace);
  env.registerConstant('strings', 'StringsNamespace', new StringsNamespace());

  env.registerFunction('SetsNamespace.contains(list, list): bool', (_ns: SetsNamespace, a: CelValue[], b: CelValue[]) =>
    b.every((item) => includesCel(a, item)),
  );
  env.registerFunction(
    'SetsNamespace.equivalent(list, list): bool',
    (_ns: SetsNamespace, a: CelValue[], b: CelValue[]) =>
      b.every((item) => includesCel(a, item)) && a.every((item) => includesCel(b, item)),
  );
  env.registerFunction(
    'SetsNamespace.intersects(list, list): bool',
    (_ns: SetsNamespace, a: CelValue[], b: CelValue[]) => a.some((item) => includesCel(b, item)),
  );
  env.registerFunction('Base64Namespace.encode(bytes): string', (_ns: Base64Namespace, bytes: Uint8Array) =>
    Buffer.from(bytes).toString('base64'),
  );
  env.registerFunction('Base64Namespace.decode(string): bytes', (_ns: Base64Namespace, text: string) => {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new Error('illegal base64 data');
    return new Uint8Array(Buffer.from(text, 'base64'));
  });
  env.registerFunction('StringsNamespace.quote(string): string', (_ns: StringsNamespace, text: string) =>
    JSON.stringify(text),
  );
  env.registerFunction('string.charAt(int): string', (text: string, index: bigint) => {
    if (index < 0n || index > BigInt(text.length)) throw new Error(`index out of range: ${index}`);
    return text.charAt(Number(index));
  });
  env.registerFunction('string.replace(string, string): string', (text: string, from: string, to: string) =>
    text.split(from).join(to),
  );
  env.registerFunction(
    'string.replace(string, string, int): string',
    (text: string, from: string, to: string, n: bigint) => {
      if (n < 0n) return text.split(from).join(to);
      const parts = text.split(from);
      const limit = Number(n);
      return (
        parts.slice(0, limit + 1).join(to) + (parts.length > limit + 1 ? from + parts.slice(limit + 1).join(from) : '')
      );
    },
  );
  env.registerFunction('string.reverse(): string', (text: string) => [...text].reverse().join(''));
  env.registerFunction('string.format(list): string', (text: string, args: CelValue[]) => formatCelString(text, args));
  env.registerFunction('list.first(): optional<dyn>', (list: CelValue[]) =>
    list.length > 0 ? Optional.of(list[0]) : Optional.none(),
  );
  env.registerFunction('list.last(): optional<dyn>', (list: CelValue[]) =>
    list.length > 0 ? Optional.of(list[list.length - 1]) : Optional.none(),
  );
  return env;
}
