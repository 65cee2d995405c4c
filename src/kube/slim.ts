/**
 * Keeps memory down and secrets out: objects read from clusters are slimmed to what status rules,
 * manifests and revisions need before they are stored anywhere.
 */

/** A Kubernetes object as JSON. */
export type KubeObject = Record<string, unknown>;

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Returns a copy without `metadata.managedFields`, the last-applied-configuration annotation (a
 * second full copy of the object), and, for Secrets, `data` and `stringData`. The input is not
 * modified.
 */
export function slimObject(obj: KubeObject): KubeObject {
  const out: KubeObject = { ...obj };
  const metadata = obj.metadata;
  if (typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata)) {
    const meta: Record<string, unknown> = { ...(metadata as Record<string, unknown>) };
    delete meta.managedFields;
    const annotations = meta.annotations;
    if (typeof annotations === 'object' && annotations !== null && LAST_APPLIED in annotations) {
      const copy: Record<string, unknown> = { ...(annotations as Record<string, unknown>) };
      delete copy[LAST_APPLIED];
      meta.annotations = copy;
    }
    out.metadata = meta;
  }
  if (isSecret(obj)) {
    delete out.data;
    delete out.stringData;
  }
  return out;
}

/** True for core `v1` Secrets. */
export function isSecret(obj: KubeObject): boolean {
  return obj.kind === 'Secret' && obj.apiVersion === 'v1';
}
