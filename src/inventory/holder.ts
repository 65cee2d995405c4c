/**
 * The inventory holder's own verdict. A phase's inventory lives in an object that the deploying tool
 * owns and writes its own status to: a Flux Kustomization or HelmRelease, an Argo CD Application, a
 * kpt ResourceGroup, a cli-utils inventory whose entries record the applier's actuation, an
 * operator's owner object. Its members can all be Current from the last good apply while the tool
 * says the deployment failed (a Kustomization whose new revision does not build, an Application
 * that is Degraded): this module reads what the tool says, as conditions with the tool as their
 * source, and as a verdict the phase's status takes when it is worse than its members' aggregate.
 *
 * Pure, and read once per holder object version (with its inventory): nothing here runs per tick.
 * The table is the README's "How statuses are computed".
 */
import { describeValue, isRecord, type JsonRecord } from './object-fields.ts';
import type { EntryDetail, ObjectRef } from './types.ts';

/** An inventory entry with what the applier recorded of it. */
export interface AppliedEntry {
  ref: ObjectRef;
  detail: EntryDetail;
}

const nameOf = (ref: ObjectRef): string =>
  ref.namespace === '' ? `${ref.kind} ${ref.name}` : `${ref.kind} ${ref.namespace}/${ref.name}`;

/** Which tool a holder's conditions come from; their types are `<source>/<Type>`. */
export type HolderSource = 'flux' | 'argocd' | 'kpt' | 'owner';

export const HOLDER_SOURCES: readonly HolderSource[] = ['flux', 'argocd', 'kpt', 'owner'];

/** One condition the holder reports, Kubernetes-style; `type` is `<source>/<Type>`. */
export interface HolderCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** A status the holder's state forces on its phase, when it is worse than the members' aggregate. */
export interface HolderVerdict {
  status: 'Failed' | 'Unknown' | 'NotFound' | 'InProgress';
  /** Names the holder first: `Kustomization flux-system/apps: BuildFailed: ...`. */
  message: string;
}

/** What a holder says about its phase. */
export interface HolderReading {
  source: HolderSource;
  /** Every condition of this kind of holder, always the same types for one kind (absent ones reported as such). */
  conditions: readonly HolderCondition[];
  /** Absent: the holder says nothing worse than Current. */
  verdict?: HolderVerdict;
}

/**
 * Ready=False reasons that mean "waiting", not "failed", by the conventions of Flux (meta's
 * `ProgressingReason`, `ProgressingWithRetryReason`, `DependencyNotReadyReason`) and of operators
 * that follow them.
 */
const WAITING_REASONS: ReadonlySet<string> = new Set([
  'Progressing',
  'ProgressingWithRetry',
  'DependencyNotReady',
  'Pending',
  'Reconciling',
  'InProgress',
  'Running',
  'Waiting',
  'Initializing',
  'Creating',
  'Installing',
  'Upgrading',
]);

class MalformedStatus extends Error {}

/**
 * One frozen copy of each verdict-free reading: a worker keeps every parsed inventory from tick to
 * tick, most holders say all is well, and they say it in few distinct ways (the applier's
 * "30 objects applied" for every phase of 30). Past the limit, new readings are kept as they come.
 */
const readingsSeen = new Map<string, HolderReading>();
const READINGS_LIMIT = 20_000;

function reading(
  source: HolderSource,
  conditions: HolderCondition[],
  verdict: HolderVerdict | undefined,
): HolderReading {
  if (verdict !== undefined) return { source, conditions, verdict };
  const key = JSON.stringify([source, conditions]);
  const known = readingsSeen.get(key);
  if (known !== undefined) return known;
  const made: HolderReading = Object.freeze({
    source,
    conditions: Object.freeze(conditions.map((c) => Object.freeze(c))),
  });
  if (readingsSeen.size < READINGS_LIMIT) readingsSeen.set(key, made);
  return made;
}

interface ReadCondition {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** `status.conditions` by type (first of each); throws MalformedStatus on a shape no tool writes. */
function readConditions(obj: JsonRecord): Map<string, ReadCondition> {
  const found = new Map<string, ReadCondition>();
  const status = obj.status;
  if (status === undefined || status === null) return found;
  if (!isRecord(status)) throw new MalformedStatus(`status is ${describeValue(status)}, not an object`);
  const list = status.conditions;
  if (list === undefined || list === null) return found;
  if (!Array.isArray(list)) throw new MalformedStatus(`status.conditions is ${describeValue(list)}, not a list`);
  list.forEach((item: unknown, index) => {
    if (!isRecord(item)) throw new MalformedStatus(`status.conditions[${index}] is ${describeValue(item)}`);
    const { type, status: value, reason, message } = item;
    for (const [field, v] of [
      ['type', type],
      ['status', value],
      ['reason', reason],
      ['message', message],
    ] as const) {
      if (v !== undefined && v !== null && typeof v !== 'string')
        throw new MalformedStatus(`status.conditions[${index}].${field} is ${describeValue(v)}, not a string`);
    }
    if (typeof type !== 'string' || type === '' || found.has(type)) return;
    found.set(type, {
      // Kubernetes allows only these three; anything else is as good as unknown.
      status: value === 'True' || value === 'False' ? value : 'Unknown',
      reason: typeof reason === 'string' ? reason : '',
      message: typeof message === 'string' ? message : '',
    });
  });
  return found;
}

function optionalInt(obj: unknown, field: string, where: string): number | undefined {
  if (!isRecord(obj)) return undefined;
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new MalformedStatus(`${where}.${field} is ${describeValue(value)}, not an integer`);
  return value;
}

function optionalString(obj: unknown, field: string, where: string): string | undefined {
  if (!isRecord(obj)) return undefined;
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new MalformedStatus(`${where}.${field} is ${describeValue(value)}, not a string`);
  return value;
}

function optionalRecord(obj: unknown, field: string, where: string): JsonRecord | undefined {
  if (!isRecord(obj)) return undefined;
  const value = obj[field];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw new MalformedStatus(`${where}.${field} is ${describeValue(value)}, not an object`);
  return value;
}

/** A condition copied under `<source>/<type>`; an absent one is reported so, with `absent` status. */
function copied(
  source: HolderSource,
  type: string,
  found: ReadCondition | undefined,
  absent: 'False' | 'Unknown',
): HolderCondition {
  return found === undefined
    ? { type: `${source}/${type}`, status: absent, reason: 'NotReported', message: `${type} is not reported` }
    : { type: `${source}/${type}`, ...found };
}

const detail = (reason: string, message: string): string =>
  reason === '' ? message : message === '' ? reason : `${reason}: ${message}`;

/** The reading of a holder whose status cannot be read: every condition Unknown, the phase Unknown. */
function malformed(source: HolderSource, holder: string, types: readonly string[], why: string): HolderReading {
  const message = `${holder}: cannot read its status: ${why}`;
  return {
    source,
    conditions: types.map((type) => ({
      type: `${source}/${type}`,
      status: 'Unknown' as const,
      reason: 'MalformedStatus',
      message,
    })),
    verdict: { status: 'Unknown', message },
  };
}

/**
 * A Ready-style condition read with kstatus' abnormal-true companions: Stalled=True fails; Ready=False
 * fails unless Reconciling=True or its reason says it waits; Reconciling=True, Ready Unknown or not
 * reported yet is in progress.
 */
function readinessVerdict(
  holder: string,
  ready: ReadCondition | undefined,
  reconciling: ReadCondition | undefined,
  stalled: ReadCondition | undefined,
  readyType = 'Ready',
): HolderVerdict | undefined {
  if (stalled?.status === 'True')
    return { status: 'Failed', message: `${holder}: Stalled: ${detail(stalled.reason, stalled.message)}` };
  if (ready?.status === 'False' && reconciling?.status !== 'True' && !WAITING_REASONS.has(ready.reason))
    return {
      status: 'Failed',
      message: `${holder}: ${detail(ready.reason, ready.message) || `${readyType} is False`}`,
    };
  if (reconciling?.status === 'True')
    return {
      status: 'InProgress',
      message: `${holder} is reconciling: ${detail(reconciling.reason, reconciling.message)}`,
    };
  if (ready === undefined) return { status: 'InProgress', message: `${holder} has not reported ${readyType} yet` };
  if (ready.status !== 'True')
    return {
      status: 'InProgress',
      message: `${holder}: ${readyType} is ${ready.status}: ${detail(ready.reason, ready.message)}`,
    };
  return undefined;
}

function generationVerdict(holder: string, obj: JsonRecord): HolderVerdict | undefined {
  const generation = optionalInt(obj.metadata, 'generation', 'metadata');
  const observed = optionalInt(obj.status, 'observedGeneration', 'status');
  if (generation !== undefined && observed !== undefined && observed < generation)
    return {
      status: 'InProgress',
      message: `${holder} has not observed generation ${generation} yet (observed ${observed})`,
    };
  return undefined;
}

const FLUX_TYPES = ['Ready', 'Reconciling', 'Stalled', 'Suspended', 'Synced'];

/**
 * Flux Kustomization / HelmRelease. Conditions `flux/Ready`, `flux/Reconciling`, `flux/Stalled`
 * (as Flux writes them), `flux/Suspended` (`spec.suspend`) and `flux/Synced` (the generation is
 * observed and the last attempted revision is the one applied). Verdict: Stalled=True or
 * Ready=False (not reconciling, not waiting on a dependency) → Failed; a HelmRelease whose latest
 * release failed → Failed; Reconciling=True, Ready Unknown or missing, a generation not yet
 * observed, a newer revision being attempted, a release pending → InProgress. A suspended object's
 * failure still counts (suspending does not undo it), but it is never waited on.
 */
export function readFluxHolder(obj: JsonRecord, holder: string): HolderReading {
  try {
    const found = readConditions(obj);
    const spec = optionalRecord(obj, 'spec', '');
    const suspend = spec?.suspend;
    if (suspend !== undefined && suspend !== null && typeof suspend !== 'boolean')
      throw new MalformedStatus(`spec.suspend is ${describeValue(suspend)}, not a boolean`);
    const suspended = suspend === true;
    const generation = optionalInt(obj.metadata, 'generation', 'metadata');
    const observed = optionalInt(obj.status, 'observedGeneration', 'status');
    const isHelmRelease = obj.kind === 'HelmRelease';
    const release = isHelmRelease ? latestRelease(obj) : undefined;
    const synced =
      generation !== undefined && observed !== undefined && observed < generation
        ? fluxSynced(
            'False',
            'GenerationNotObserved',
            `generation ${generation} not observed yet (observed ${observed})`,
          )
        : isHelmRelease
          ? helmReleaseSynced(obj, release)
          : kustomizationSynced(obj);
    const conditions: HolderCondition[] = [
      copied('flux', 'Ready', found.get('Ready'), 'Unknown'),
      copied('flux', 'Reconciling', found.get('Reconciling'), 'False'),
      copied('flux', 'Stalled', found.get('Stalled'), 'False'),
      suspended
        ? { type: 'flux/Suspended', status: 'True', reason: 'Suspended', message: 'spec.suspend is true' }
        : { type: 'flux/Suspended', status: 'False', reason: 'NotSuspended', message: '' },
      synced,
    ];
    const readiness = readinessVerdict(holder, found.get('Ready'), found.get('Reconciling'), found.get('Stalled'));
    let verdict: HolderVerdict | undefined;
    if (readiness?.status === 'Failed') verdict = readiness;
    else if (release?.status === 'failed')
      verdict = { status: 'Failed', message: `${holder}: release ${release.name} failed` };
    else if (!suspended)
      verdict =
        readiness ??
        (synced.status === 'False' ? { status: 'InProgress', message: `${holder}: ${synced.message}` } : undefined) ??
        (release?.status.startsWith('pending') === true
          ? { status: 'InProgress', message: `${holder}: release ${release.name} is ${release.status}` }
          : undefined);
    return reading('flux', conditions, verdict);
  } catch (error) {
    if (error instanceof MalformedStatus) return malformed('flux', holder, FLUX_TYPES, error.message);
    throw error;
  }
}

const fluxSynced = (status: HolderCondition['status'], reason: string, message: string): HolderCondition => ({
  type: 'flux/Synced',
  status,
  reason,
  message,
});

/** A Kustomization is synced when the last revision it attempted is the one it applied. */
function kustomizationSynced(obj: JsonRecord): HolderCondition {
  const applied = optionalString(obj.status, 'lastAppliedRevision', 'status') ?? '';
  const attempted = optionalString(obj.status, 'lastAttemptedRevision', 'status') ?? '';
  if (attempted !== '' && attempted !== applied)
    return fluxSynced(
      'False',
      'NewRevisionNotApplied',
      `revision ${attempted} attempted, ${applied === '' ? 'none' : applied} applied`,
    );
  if (applied === '') return fluxSynced('Unknown', 'NotReported', 'no revision applied yet');
  return fluxSynced('True', 'Applied', `revision ${applied} applied`);
}

/** A HelmRelease is synced when its latest release is deployed from the chart version it last attempted. */
function helmReleaseSynced(obj: JsonRecord, release: Release | undefined): HolderCondition {
  const attempted = optionalString(obj.status, 'lastAttemptedRevision', 'status') ?? '';
  if (release === undefined) return fluxSynced('Unknown', 'NotReported', 'no release yet');
  if (attempted !== '' && release.chartVersion !== undefined && attempted !== release.chartVersion)
    return fluxSynced(
      'False',
      'NewRevisionNotApplied',
      `chart ${attempted} attempted, release ${release.name} is of ${release.chartVersion}`,
    );
  if (release.status !== 'deployed')
    return fluxSynced('False', 'ReleaseNotDeployed', `release ${release.name} is ${release.status}`);
  return fluxSynced('True', 'Deployed', `release ${release.name} deployed`);
}

interface Release {
  name: string;
  status: string;
  chartVersion?: string;
}

/** A HelmRelease's `status.history[0]` (the latest release), when it has one. */
function latestRelease(obj: JsonRecord): Release | undefined {
  const history = isRecord(obj.status) ? obj.status.history : undefined;
  if (history === undefined || history === null) return undefined;
  if (!Array.isArray(history)) throw new MalformedStatus(`status.history is ${describeValue(history)}, not a list`);
  const latest: unknown = history[0];
  if (latest === undefined) return undefined;
  const status = optionalString(latest, 'status', 'status.history[0]');
  if (status === undefined) return undefined;
  const name = optionalString(latest, 'name', 'status.history[0]') ?? '';
  const version = optionalInt(latest, 'version', 'status.history[0]');
  const chartVersion = optionalString(latest, 'chartVersion', 'status.history[0]');
  return {
    name: version === undefined ? name : `${name}.v${version}`,
    status,
    ...(chartVersion !== undefined ? { chartVersion } : {}),
  };
}

const ARGO_TYPES = ['Healthy', 'Synced', 'OperationSucceeded'];

/**
 * Argo CD Application. Conditions `argocd/Healthy` (`status.health.status`), `argocd/Synced`
 * (`status.sync.status`) and `argocd/OperationSucceeded` (`status.operationState.phase`). Verdict:
 * Degraded → Failed; the last operation Failed or Error while not Synced → Failed; Missing →
 * NotFound; Unknown → Unknown; an operation Running, Progressing, or no health yet → InProgress.
 * OutOfSync and Suspended are conditions only: they say what the tool will do, not how the
 * deployment is.
 */
export function readArgoHolder(obj: JsonRecord, holder: string): HolderReading {
  try {
    const health = optionalRecord(obj.status, 'health', 'status');
    const sync = optionalRecord(obj.status, 'sync', 'status');
    const operation = optionalRecord(obj.status, 'operationState', 'status');
    const healthStatus = optionalString(health, 'status', 'status.health');
    const healthMessage = optionalString(health, 'message', 'status.health') ?? '';
    const syncStatus = optionalString(sync, 'status', 'status.sync');
    const revision = optionalString(sync, 'revision', 'status.sync');
    const phase = optionalString(operation, 'phase', 'status.operationState');
    const operationMessage = optionalString(operation, 'message', 'status.operationState') ?? '';
    const conditions: HolderCondition[] = [
      {
        type: 'argocd/Healthy',
        status:
          healthStatus === 'Healthy'
            ? 'True'
            : healthStatus === undefined || healthStatus === 'Unknown'
              ? 'Unknown'
              : 'False',
        reason: healthStatus ?? 'NotReported',
        message: healthMessage,
      },
      {
        type: 'argocd/Synced',
        status: syncStatus === 'Synced' ? 'True' : syncStatus === 'OutOfSync' ? 'False' : 'Unknown',
        reason: syncStatus ?? 'NotReported',
        message: revision === undefined || revision === '' ? '' : `revision ${revision}`,
      },
      {
        type: 'argocd/OperationSucceeded',
        status: phase === 'Succeeded' ? 'True' : phase === 'Failed' || phase === 'Error' ? 'False' : 'Unknown',
        reason: phase ?? 'NoOperation',
        message: operationMessage,
      },
    ];
    const said = (what: string, message: string) => `${holder}${what}${message === '' ? '' : `: ${message}`}`;
    let verdict: HolderVerdict | undefined;
    if (healthStatus === 'Degraded') verdict = { status: 'Failed', message: said(' is Degraded', healthMessage) };
    else if ((phase === 'Failed' || phase === 'Error') && syncStatus !== 'Synced')
      verdict = { status: 'Failed', message: said(`: sync ${phase}`, operationMessage) };
    else if (healthStatus === 'Missing') verdict = { status: 'NotFound', message: said(' is Missing', healthMessage) };
    else if (healthStatus === 'Unknown')
      verdict = { status: 'Unknown', message: said(' health is Unknown', healthMessage) };
    else if (phase === 'Running' || phase === 'Terminating')
      verdict = { status: 'InProgress', message: said(`: sync ${phase}`, operationMessage) };
    else if (healthStatus === 'Progressing')
      verdict = { status: 'InProgress', message: said(' is Progressing', healthMessage) };
    else if (healthStatus === undefined)
      verdict = { status: 'InProgress', message: `${holder} has not reported health yet` };
    return reading('argocd', conditions, verdict);
  } catch (error) {
    if (error instanceof MalformedStatus) return malformed('argocd', holder, ARGO_TYPES, error.message);
    throw error;
  }
}

/** What the applier recorded of its entries' actuation, summed up. */
function actuationOf(entries: Iterable<AppliedEntry>): {
  condition?: HolderCondition;
  failed?: string;
  pending?: string;
} {
  let recorded = 0;
  let failed: string | undefined;
  let failedCount = 0;
  let pending: string | undefined;
  let pendingCount = 0;
  let skipped = 0;
  for (const { ref, detail: d } of entries) {
    if (d.actuation === undefined) continue;
    const key = nameOf(ref);
    recorded++;
    if (d.actuation === 'Failed') {
      failedCount++;
      failed ??= key;
    } else if (d.actuation === 'Pending') {
      pendingCount++;
      pending ??= key;
    } else if (d.actuation === 'Skipped') skipped++;
  }
  if (recorded === 0) return {};
  const condition: HolderCondition =
    failed !== undefined
      ? {
          type: 'kpt/Applied',
          status: 'False',
          reason: 'ActuationFailed',
          message: `${failedCount} of ${recorded} objects failed to apply, first ${failed}`,
        }
      : pending !== undefined
        ? {
            type: 'kpt/Applied',
            status: 'False',
            reason: 'ActuationPending',
            message: `${pendingCount} of ${recorded} objects not applied yet, first ${pending}`,
          }
        : {
            type: 'kpt/Applied',
            status: 'True',
            reason: 'ActuationSucceeded',
            message:
              skipped > 0
                ? `${recorded - skipped} of ${recorded} objects applied, ${skipped} skipped`
                : `${recorded} objects applied`,
          };
  return {
    condition,
    ...(failed !== undefined
      ? { failed: `${failedCount} of ${recorded} objects failed to apply, first ${failed}` }
      : {}),
    ...(pending !== undefined
      ? { pending: `${pendingCount} of ${recorded} objects not applied yet, first ${pending}` }
      : {}),
  };
}

/**
 * A cli-utils inventory ConfigMap (kpt live, kapply, airshipctl): the applier's per-entry
 * `actuation` as `kpt/Applied`. Any Failed → Failed; any Pending → InProgress. Skipped (the
 * applier chose not to apply, e.g. another inventory owns the object) is reported, not judged.
 * Nothing when no entry records actuation (status recording off, older appliers).
 */
export function readCliUtilsHolder(entries: Iterable<AppliedEntry>, holder: string): HolderReading | undefined {
  const actuation = actuationOf(entries);
  if (actuation.condition === undefined) return undefined;
  return reading('kpt', [actuation.condition], applierVerdict(holder, actuation));
}

function applierVerdict(holder: string, actuation: ReturnType<typeof actuationOf>): HolderVerdict | undefined {
  if (actuation.failed !== undefined) return { status: 'Failed', message: `${holder}: ${actuation.failed}` };
  if (actuation.pending !== undefined) return { status: 'InProgress', message: `${holder}: ${actuation.pending}` };
  return undefined;
}

const KPT_TYPES = ['Reconciling', 'Stalled', 'Applied'];

/**
 * A kpt ResourceGroup: `kpt/Reconciling` and `kpt/Stalled` as the resource-group controller writes
 * them, and `kpt/Applied` from the actuation kpt recorded. Stalled=True or an actuation Failed →
 * Failed; Reconciling=True, a generation not observed or an actuation Pending → InProgress.
 */
export function readResourceGroupHolder(
  obj: JsonRecord,
  entries: Iterable<AppliedEntry>,
  holder: string,
): HolderReading {
  try {
    const found = readConditions(obj);
    const actuation = actuationOf(entries);
    const conditions: HolderCondition[] = [
      copied('kpt', 'Reconciling', found.get('Reconciling'), 'False'),
      copied('kpt', 'Stalled', found.get('Stalled'), 'False'),
      actuation.condition ?? {
        type: 'kpt/Applied',
        status: 'Unknown',
        reason: 'NotReported',
        message: 'no actuation recorded',
      },
    ];
    const stalled = found.get('Stalled');
    const reconciling = found.get('Reconciling');
    const applied = applierVerdict(holder, actuation);
    let verdict: HolderVerdict | undefined;
    if (stalled?.status === 'True')
      verdict = { status: 'Failed', message: `${holder}: Stalled: ${detail(stalled.reason, stalled.message)}` };
    else if (applied?.status === 'Failed') verdict = applied;
    else if (reconciling?.status === 'True')
      verdict = {
        status: 'InProgress',
        message: `${holder} is reconciling: ${detail(reconciling.reason, reconciling.message)}`,
      };
    else verdict = generationVerdict(holder, obj) ?? applied;
    return reading('kpt', conditions, verdict);
  } catch (error) {
    if (error instanceof MalformedStatus) return malformed('kpt', holder, KPT_TYPES, error.message);
    throw error;
  }
}

/**
 * An owner phase's owner (an operator's custom resource): `owner/<readyCondition>` as the operator
 * writes it (default `Ready`) and `owner/Started` (whether it owns any task yet). Not started, not
 * ready yet, reconciling → InProgress; Stalled=True, or the ready condition False without a waiting
 * reason and not reconciling → Failed. Once tasks exist and the owner reports no ready condition at
 * all, its tasks speak for it (operators that write none are common).
 */
export function readOwnerHolder(
  obj: JsonRecord,
  holder: string,
  options: { readyCondition: string; tasks: number },
): HolderReading {
  const types = [options.readyCondition, 'Started'];
  try {
    const found = readConditions(obj);
    const ready = found.get(options.readyCondition);
    const started: HolderCondition =
      options.tasks > 0
        ? { type: 'owner/Started', status: 'True', reason: 'TasksCreated', message: `${options.tasks} owned objects` }
        : { type: 'owner/Started', status: 'False', reason: 'NoTaskYet', message: `${holder} owns no task yet` };
    const conditions: HolderCondition[] = [copied('owner', options.readyCondition, ready, 'Unknown'), started];
    const readiness =
      ready === undefined && options.tasks > 0
        ? undefined
        : readinessVerdict(holder, ready, found.get('Reconciling'), found.get('Stalled'), options.readyCondition);
    const verdict: HolderVerdict | undefined =
      readiness?.status === 'Failed'
        ? readiness
        : options.tasks === 0
          ? { status: 'InProgress', message: `${holder} has started no task yet` }
          : readiness;
    return reading('owner', conditions, verdict);
  } catch (error) {
    if (error instanceof MalformedStatus) return malformed('owner', holder, types, error.message);
    throw error;
  }
}
