/**
 * A status view kept in the clear for as long as a worker watches the object is made by
 * JSON.stringify, which may give it as a tree of parts (32-byte cons cells). A flat copy made once
 * costs its characters only. (Keys built from parts are joined instead: `[a, b].join('/')` is flat.)
 */

/** A flat copy of `text` (same characters). */
export function flatString(text: string): string {
  // UTF-8 round trip: a new sequential string. Exact for well-formed text; a lone surrogate (never
  // in Kubernetes names, escaped by JSON.stringify) keeps the string as it is.
  const flat = Buffer.from(text, 'utf8').toString('utf8');
  return flat === text ? flat : text;
}
