/**
 * Stored object revisions as people read them: YAML in kubectl's key order, and unified diffs of
 * two such renderings (`kubectl diff`, `flux diff`, `argocd app diff` show the same). What is
 * rendered is what the store holds, already redacted (redact.ts): nothing here adds or removes
 * fields. Sizes are bounded so that one huge object (a ConfigMap near etcd's 1.5 MiB limit) cannot
 * blow up an answer: texts are cut at a line boundary with a marker line saying how much was left
 * out, and a diff whose edit script would be longer than {@link MAX_EDIT_LENGTH} lines, or that runs
 * out of the time its caller gives it, is not computed (its marker says so).
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { stringify, type Pair } from 'yaml';

/** Longest content (YAML) returned for one revision, in UTF-8 bytes; longer is cut with a marker. */
export const CONTENT_MAX_BYTES = 64 * 1024;
/** Longest diff returned for one object, in UTF-8 bytes; longer is cut with a marker. */
export const DIFF_MAX_BYTES = 64 * 1024;
/** Most context lines a diff may ask for. */
export const MAX_CONTEXT = 1000;
/**
 * Longest edit script (changed lines) a diff is computed for. Myers' algorithm works in about
 * (lines) x (edit length): this keeps the worst case (two big objects differing everywhere) to a
 * small fraction of a second.
 */
export const MAX_EDIT_LENGTH = 1000;

/** Keys a Kubernetes object shows first, in this order (as kubectl prints them); the rest sort by name. */
const TOP_KEYS = ['apiVersion', 'kind', 'metadata', 'spec'];
const rank = (key: unknown): number => {
  const i = TOP_KEYS.indexOf(String(key));
  return i === -1 ? TOP_KEYS.length : i;
};

/**
 * The object as YAML with a stable key order (Postgres' jsonb keeps its own order, shortest key
 * first, which would read oddly and move lines between revisions): kubectl's top-level order, then
 * names in code-point order.
 */
export function renderRevisionYaml(object: unknown): string {
  return stringify(object, {
    sortMapEntries: (a: Pair, b: Pair) => {
      const ka = a.key as { value?: unknown } | string;
      const kb = b.key as { value?: unknown } | string;
      const na = typeof ka === 'object' && ka !== null ? ka.value : ka;
      const nb = typeof kb === 'object' && kb !== null ? kb.value : kb;
      const r = rank(na) - rank(nb);
      if (r !== 0) return r;
      const sa = String(na);
      const sb = String(nb);
      return sa < sb ? -1 : sa > sb ? 1 : 0;
    },
    lineWidth: 0,
    indentSeq: false,
  });
}

/** A text cut to at most `maxBytes` UTF-8 bytes at a line end, plus a marker line when cut. */
export interface CappedText {
  text: string;
  truncated: boolean;
}

/** The marker line that ends a cut text; it starts with `#` so it reads as a YAML comment. */
export function truncationMarker(omittedBytes: number, maxBytes: number): string {
  return `# ... truncated by phaselog: ${omittedBytes} more bytes (limit ${maxBytes} bytes)\n`;
}

/** `text` as is when it fits in `maxBytes`, else its longest prefix ending at a line end that fits, and the marker. */
export function capText(text: string, maxBytes: number): CappedText {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return { text, truncated: false };
  const head = Buffer.from(text, 'utf8').subarray(0, maxBytes).toString('utf8');
  const end = head.lastIndexOf('\n');
  // A single line longer than the cap: keep its start (the replacement character of a cut
  // multi-byte sequence is dropped with it).
  const kept = end >= 0 ? head.slice(0, end + 1) : head.replace(/\uFFFD$/, '') + '\n';
  return { text: kept + truncationMarker(bytes - Buffer.byteLength(kept, 'utf8'), maxBytes), truncated: true };
}

/** One side of a diff: the revision's rendering and how its header names it. */
export interface DiffSide {
  /** The YAML rendering; null when there is no such side (added or removed) or it is not stored. */
  text: string | null;
  /** Says which revision this is, e.g. `3fa1c2d4e5f6, 2026-11-26T17:00:00.000Z` or `not in the manifest`. */
  label: string;
}

/** Why {@link unifiedDiff} refuses a context. */
export class DiffContextError extends Error {
  constructor(readonly context: number) {
    super(`context must be an integer from 0 to ${MAX_CONTEXT}, got ${context}`);
    this.name = 'DiffContextError';
  }
}

/** Whether `context` is a context {@link unifiedDiff} accepts. */
export function isDiffContext(context: number): boolean {
  return Number.isInteger(context) && context >= 0 && context <= MAX_CONTEXT;
}

/**
 * The unified diff of two renderings, with `--- before (label)` / `+++ after (label)` headers and
 * `context` lines around each change; '' when they are equal. A missing side diffs as empty (an
 * added object is all `+`, a removed one all `-`). Cut at {@link DIFF_MAX_BYTES} with a marker.
 */
export function unifiedDiff(
  before: DiffSide,
  after: DiffSide,
  context = 3,
  options: { timeoutMs?: number } = {},
): CappedText {
  if (!isDiffContext(context)) throw new DiffContextError(context);
  const a = before.text ?? '';
  const b = after.text ?? '';
  if (a === b) return { text: '', truncated: false };
  const limits = {
    maxEditLength: MAX_EDIT_LENGTH,
    ...(options.timeoutMs === undefined ? {} : { timeout: Math.max(1, options.timeoutMs) }),
  };
  const patch = structuredPatch('before', 'after', a, b, `(${before.label})`, `(${after.label})`, {
    context,
    ...limits,
  });
  if (patch === undefined) {
    return {
      text: `--- before (${before.label})\n+++ after (${after.label})\n# diff not computed by phaselog: more than ${MAX_EDIT_LENGTH} changed lines, or out of time\n`,
      truncated: true,
    };
  }
  // formatPatch puts a tab between the name and its label; a space reads the same in any terminal.
  const text = formatPatch(patch, FILE_HEADERS_ONLY).replace(/^(---|\+\+\+) (before|after)\t/gm, '$1 $2 ');
  return capText(text, DIFF_MAX_BYTES);
}
