/**
 * What kube-apiserver's apiextensions controllers write into a CustomResourceDefinition's status
 * once it is served: the NamingConditionController copies the requested names into
 * `status.acceptedNames` and sets `NamesAccepted`, the EstablishingController then sets
 * `Established`, and `status.storedVersions` lists the storage version. Clients wait on these
 * (`kubectl wait --for condition=established crd/<name>`, Flux and Argo CD before using a kind), so
 * the emulator answers as a settled cluster would: both conditions True as soon as the CRD exists.
 */
import type { KubeObject } from './types.ts';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function readConditions(status: Record<string, unknown>): Condition[] {
  const c = status['conditions'];
  return Array.isArray(c) ? (c.filter((x) => typeof x === 'object' && x !== null) as Condition[]) : [];
}

// Keeps lastTransitionTime when the condition already had this status, as the controllers do.
function settleCondition(previous: Condition[], next: Omit<Condition, 'lastTransitionTime'>, now: string): Condition {
  const before = previous.find((c) => c.type === next.type);
  return {
    ...next,
    lastTransitionTime:
      before?.status === next.status && typeof before.lastTransitionTime === 'string' ? before.lastTransitionTime : now,
  };
}

/** The names the apiserver accepts: the requested ones with `singular` and `listKind` defaulted. */
function acceptedNamesOf(names: Record<string, unknown>): Record<string, unknown> {
  const kind = typeof names['kind'] === 'string' ? names['kind'] : '';
  const accepted: Record<string, unknown> = {
    plural: names['plural'],
    singular:
      typeof names['singular'] === 'string' && names['singular'] !== '' ? names['singular'] : kind.toLowerCase(),
    kind,
    listKind: typeof names['listKind'] === 'string' && names['listKind'] !== '' ? names['listKind'] : `${kind}List`,
  };
  if (Array.isArray(names['shortNames']) && names['shortNames'].length > 0)
    accepted['shortNames'] = names['shortNames'];
  if (Array.isArray(names['categories']) && names['categories'].length > 0)
    accepted['categories'] = names['categories'];
  return accepted;
}

/**
 * Returns the CRD with the status its controllers would settle on: `acceptedNames`,
 * `NamesAccepted` and `Established` True, and the storage version in `storedVersions`. A CRD being
 * deleted keeps its status (the apiserver then reports `Terminating`, which this emulator skips).
 */
export function settleCrdStatus(crd: KubeObject, now: string): KubeObject {
  if (asRecord(crd.metadata)['deletionTimestamp'] !== undefined) return crd;
  const spec = asRecord(crd['spec']);
  const status = asRecord(crd['status']);
  const previous = readConditions(status);
  const others = previous.filter((c) => c.type !== 'NamesAccepted' && c.type !== 'Established');
  const versions = Array.isArray(spec['versions']) ? spec['versions'].map(asRecord) : [];
  const storage = versions.find((v) => v['storage'] === true)?.['name'];
  const stored = Array.isArray(status['storedVersions'])
    ? status['storedVersions'].filter((v): v is string => typeof v === 'string')
    : [];
  if (typeof storage === 'string' && !stored.includes(storage)) stored.push(storage);
  return {
    ...crd,
    status: {
      ...status,
      conditions: [
        ...others,
        settleCondition(
          previous,
          { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
          now,
        ),
        settleCondition(
          previous,
          {
            type: 'Established',
            status: 'True',
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
          },
          now,
        ),
      ],
      acceptedNames: acceptedNamesOf(asRecord(spec['names'])),
      storedVersions: stored,
    },
  };
}
