/**
 * Structural equality of JSON values, ignoring object key order (clients re-serialise objects in
 * their own field order, and a no-op update must still be recognised as one).
 */

/** Whether two JSON values are equal regardless of object key order. */
export function isJsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => isJsonEqual(x, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  return (
    ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && isJsonEqual(ra[k], rb[k]))
  );
}
