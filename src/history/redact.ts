/**
 * What phaselog keeps of an object it stores (a manifest's inventory object, a resource revision):
 * metadata and spec, never Secret `data`/`stringData`, never `status` (statuses are stored as
 * intervals), never the fields that change on every write (resourceVersion, managedFields) or that
 * hold a second copy of the object (kubectl's last-applied-configuration), and never the
 * annotations the operator configured as sensitive.
 */
import { hashDocument } from './canonical-hash.ts';
import type { HashedDocument } from './types.ts';

/** Always dropped: a full copy of the last applied object, often including Secret data. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** Options of {@link redactObject}. */
export interface RedactionOptions {
  /** Further annotation keys never to store (e.g. ones that carry credentials). @default [] */
  dropAnnotations?: readonly string[];
}

const VOLATILE_METADATA = ['managedFields', 'resourceVersion', 'generation', 'selfLink'];

/** A redacted copy of `object`; the input is not modified. */
export function redactObject(object: Record<string, unknown>, options: RedactionOptions = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...object };
  delete out.status;
  if (out.kind === 'Secret' && (out.apiVersion === 'v1' || out.apiVersion === undefined)) {
    delete out.data;
    delete out.stringData;
  }
  const metadata = object.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    const meta: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
    for (const key of VOLATILE_METADATA) delete meta[key];
    const annotations = meta.annotations;
    if (typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations)) {
      const kept: Record<string, unknown> = { ...(annotations as Record<string, unknown>) };
      delete kept[LAST_APPLIED_ANNOTATION];
      for (const key of options.dropAnnotations ?? []) delete kept[key];
      if (Object.keys(kept).length === 0) delete meta.annotations;
      else meta.annotations = kept;
    }
    out.metadata = meta;
  }
  return out;
}

/** Redacts `object` and addresses it by the sha256 of what is kept. */
export function hashRedacted(object: Record<string, unknown>, options: RedactionOptions = {}): HashedDocument {
  const body = redactObject(object, options);
  return { hash: hashDocument(body), body };
}

/** The name {@link redactionKey} gives redaction options; only it makes one, so two compare equal exactly when the options redact alike. */
export type RedactionKey = string & { readonly __redactionKey: true };

/**
 * A stable name of redaction options, so a revision or memo made under other options is
 * recognised: watch caches record it with each revision, and the snapshot's memos key by it.
 */
export function redactionKey(options: RedactionOptions | undefined): RedactionKey {
  const drops = options?.dropAnnotations ?? [];
  return (drops.length === 0 ? '' : [...drops].sort().join('\u0000')) as RedactionKey;
}
