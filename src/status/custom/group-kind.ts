/**
 * The group of an `apiVersion`: `apps/v1` -> `apps`, `v1` -> `` (core). Versions never matter for
 * matching, as in Flux (GroupKind) and Argo CD (`<group>/<Kind>` keys).
 */
export function readGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** Reads `apiVersion` and `kind` of an object, or undefined when either is not a non-empty string. */
export function readGroupKind(object: Record<string, unknown>): { group: string; kind: string } | undefined {
  const { apiVersion, kind } = object;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || kind === '') return undefined;
  return { group: readGroup(apiVersion), kind };
}

/** Argo CD's key for a group and kind: `Kind` for the core group, else `group/Kind`. */
export function formatArgoKey(group: string, kind: string): string {
  return group === '' ? kind : `${group}/${kind}`;
}

/** A compiled `*` glob over an Argo CD key, with how specific it is. */
export interface KeyPattern {
  pattern: string;
  regex: RegExp;
  /** Count of literal (non-`*`) characters: more literal characters rank first. */
  literalLength: number;
}

/**
 * Compiles an Argo CD wildcard key (`*.crossplane.io/*`; folders and argocd-cm keys spell the
 * separator `/` as `_`). Argo CD matches with gobwas/glob without separators, so `*` matches any
 * run of characters; other glob syntax is taken literally here.
 */
export function compileKeyPattern(pattern: string): KeyPattern {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return { pattern, regex: new RegExp(`^${body}$`), literalLength: pattern.replaceAll('*', '').length };
}

/**
 * Orders wildcard patterns most specific first: more literal characters, then fewer wildcards, then
 * alphabetically, so the choice never depends on file-system or map order.
 */
export function compareKeyPatterns(a: KeyPattern, b: KeyPattern): number {
  if (a.literalLength !== b.literalLength) return b.literalLength - a.literalLength;
  const wildA = a.pattern.split('*').length;
  const wildB = b.pattern.split('*').length;
  if (wildA !== wildB) return wildA - wildB;
  return a.pattern < b.pattern ? -1 : a.pattern > b.pattern ? 1 : 0;
}
