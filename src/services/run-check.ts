/**
 * Runs one check (http or webhook) over one cluster's selected phases, as one batch: every phase's
 * request (a bounded number at once), then one write of what changed and the run's time, then the
 * changes published. A failing request is an Unknown condition, never an error of the run.
 */
import type { Logger } from 'pino';
import type { CheckKind, ConditionResult } from '../history/condition-changes.ts';
import { isSelected, type CheckConfig, type CheckedPhase, type SecretSource } from '../checks/config.ts';
import { runHttpCheck, type CheckVerdict } from '../checks/http-check.ts';
import { runWebhookCheck } from '../checks/webhook-check.ts';
import { fillUrlTemplate, TemplateError } from '../checks/url-template.ts';
import type { ChangePublisher } from '../pubsub/change-publisher.ts';
import type { CheckRunWritten, ConditionStore } from '../store/condition-store.ts';
import type { PhaseReader } from '../store/read-phases.ts';
import type { HistoryReader } from '../store/read-history.ts';
import { FULL_ACCESS, type PhaseRecord } from '../store/read-types.ts';

/** Reads a secret (header value, HMAC key) from its file or environment variable; rejects with a SecretUnavailableError. */
export type SecretReader = (source: SecretSource) => Promise<string>;

/** What a check run uses. */
export interface RunCheckDeps {
  phases: PhaseReader;
  history: Pick<HistoryReader, 'listResources'>;
  conditions: Pick<ConditionStore, 'recordRun'>;
  publisher?: Pick<ChangePublisher, 'publish'>;
  readSecret: SecretReader;
  log: Logger;
  /**
   * Asks for a snapshot of the cluster now: a condition of a check with `affectsStatus` changed,
   * and its phases' statuses take it in when they are observed next. @default none
   */
  requestSnapshot?: (cluster: string) => Promise<unknown>;
  /** Requests in flight at once per run. @default 16 */
  concurrency?: number;
}

/** What one run did. */
export interface CheckRunOutcome {
  phases: number;
  results: ConditionResult[];
  written: CheckRunWritten;
}

const PAGE = 1000;

/** The kind of a configured check. */
export function checkKindOf(check: CheckConfig): CheckKind {
  return check.http !== undefined ? 'http' : check.webhook !== undefined ? 'webhook' : 'cel';
}

/** Runs `check` over the live phases of `cluster` it selects, at `at`, and records the results. */
export async function runCheckOnCluster(
  deps: RunCheckDeps,
  check: CheckConfig,
  cluster: string,
  at: Date,
): Promise<CheckRunOutcome> {
  const phases = await selectedPhases(deps.phases, check, cluster);
  const verdicts = await mapLimited(phases, deps.concurrency ?? 16, (phase) => verdictFor(deps, check, phase));
  const results: ConditionResult[] = phases.flatMap((phase, n) =>
    (verdicts[n] as TypedVerdict[]).map(({ type, ...verdict }) => ({ phaseId: phase.id, type, ...verdict })),
  );
  const written = await deps.conditions.recordRun({
    check: check.name,
    source: checkKindOf(check),
    cluster,
    intervalMs: check.interval,
    at,
    results,
  });
  if (written.changes.length > 0 && check.affectsStatus && deps.requestSnapshot) {
    await deps
      .requestSnapshot(cluster)
      .catch((err: unknown) =>
        deps.log.warn(
          { err, check: check.name, cluster },
          'could not queue a snapshot for a changed affectsStatus condition; the next tick records it',
        ),
      );
  }
  if (written.changes.length > 0) {
    await deps.publisher
      ?.publish(written.changes)
      .catch((err: unknown) =>
        deps.log.warn(
          { err, check: check.name, cluster },
          'publishing condition changes failed; subscribers catch up from the change log',
        ),
      );
  }
  return { phases: phases.length, results, written };
}

async function selectedPhases(reader: PhaseReader, check: CheckConfig, cluster: string): Promise<PhaseRecord[]> {
  if (check.select.clusters.length > 0 && !check.select.clusters.includes(cluster)) return [];
  const selected: PhaseRecord[] = [];
  let after: PhaseRecord | undefined;
  for (;;) {
    const page = await reader.listPhases(FULL_ACCESS, {
      filter: { cluster, ...(Object.keys(check.select.labels).length > 0 ? { labels: check.select.labels } : {}) },
      order: 'NAME',
      first: PAGE,
      ...(after
        ? { after: { severity: 0, cluster: after.cluster, namespace: after.namespace, name: after.name, id: after.id } }
        : {}),
    });
    selected.push(...page.items.filter((p) => isSelected(check.select, toChecked(p))));
    if (!page.hasMore || page.items.length === 0) return selected;
    after = page.items.at(-1);
  }
}

function toChecked(p: PhaseRecord): CheckedPhase {
  return { id: p.id, cluster: p.cluster, source: p.source, namespace: p.namespace, name: p.name, labels: p.labels };
}

type TypedVerdict = CheckVerdict & { type: string };

/** A phase's verdicts: one of the check's type, and for webhooks also those of its sub-types. */
async function verdictFor(deps: RunCheckDeps, check: CheckConfig, phase: PhaseRecord): Promise<TypedVerdict[]> {
  if (check.webhook !== undefined) {
    const webhook = check.webhook;
    const single = await safely(deps, check, phase, async () => {
      const url = fillUrlTemplate(webhook.url, toChecked(phase));
      const secret = await deps.readSecret(webhook.secretFrom);
      const members = await deps.history.listResources(phase.id, { first: 100 });
      return runWebhookCheck(webhook, {
        url,
        timeoutMs: check.timeout,
        secret,
        type: check.name,
        phase,
        members: members.items,
      });
    });
    return Array.isArray(single) ? single : [{ type: check.name, ...single }];
  }
  return [{ type: check.name, ...(await safely(deps, check, phase, () => httpVerdict(deps, check, phase))) }];
}

async function httpVerdict(deps: RunCheckDeps, check: CheckConfig, phase: PhaseRecord): Promise<CheckVerdict> {
  if (check.http === undefined)
    return { status: 'Unknown', reason: 'NotRunOnWorkers', message: 'cel checks run with snapshots' };
  const url = fillUrlTemplate(check.http.url, toChecked(phase));
  const headers: Record<string, string> = {};
  for (const header of check.http.headersFrom) headers[header.name] = await deps.readSecret(header);
  return runHttpCheck(check.http, { url, timeoutMs: check.timeout, headers });
}

/** Runs `work`; a template, secret or unexpected error becomes an Unknown verdict. */
async function safely<T>(
  deps: RunCheckDeps,
  check: CheckConfig,
  phase: PhaseRecord,
  work: () => Promise<T>,
): Promise<T | CheckVerdict> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TemplateError) return { status: 'Unknown', reason: 'TemplateError', message: error.message };
    if (error instanceof Error && error.name === 'SecretUnavailableError')
      return { status: 'Unknown', reason: 'SecretUnavailable', message: error.message };
    // Anything else is a bug of ours; the condition says so without the details (they may hold a secret).
    deps.log.error({ err: error, check: check.name, phaseId: phase.id }, 'check failed unexpectedly');
    return { status: 'Unknown', reason: 'CheckError', message: 'the check failed unexpectedly (see the worker log)' };
  }
}

/** Runs `work` over `items` with at most `limit` at once; results in the order of `items`. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const n = next++;
      results[n] = await work(items[n] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}
