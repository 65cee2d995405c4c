/**
 * The fault suite's test bed: an emulated cluster with one phase whose status the test drives,
 * phaselog as child processes (as a user runs it), and three observers that run for the whole test:
 * - a `/readyz` poller, judged against what the test knows was true (a server killed, no worker),
 * - a gate poller, judged against the cluster's real status and what phaselog could observe,
 * - the change log, read back over GraphQL by seq, judged against the transitions the test made.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SNAPSHOT_QUEUE, snapshotSchedulerId } from '../../src/queue/snapshot-jobs.ts';
import { startEmulator, type Emulator } from '../../src/emulator/index.ts';
import { cliUtilsInventory, readyDeployment } from '../../src/demo/objects.ts';
import { waitFor } from '../../src/runtime/wait.ts';
import { cleanEnv, runPhaselog, type PhaselogProcess } from '../helpers/process.ts';
import { uniquePrefix } from '../helpers/services.ts';
import { exitOf } from './servers.ts';

/** Snapshot interval of every phaselog in the suite. */
export const INTERVAL_MS = 1000;
/**
 * How long phaselog may take to notice what it cannot see any more (a phase unobserved, a worker not
 * recording) before a gate or /readyz must say so: the bound phaselog documents for an unobserved
 * cluster (three intervals, and at least one interval plus 10 s), plus slack for a loaded machine.
 */
export const NOTICE_MS = INTERVAL_MS + 10_000 + 3000;
/** How long the suite's faults last: long enough that phaselog must have noticed them. */
export const FAULT_MS = NOTICE_MS + 3000;
/** How long a change, or a recovery, may take to show once phaselog can see it again. */
export const RECOVERY_MS = 45_000;

export const NAMESPACE = 'shop';
export const PHASE = 'api';
/** The Deployment's resource key as the change log writes it. */
export const DEPLOYMENT_KEY = `apps/Deployment/${NAMESPACE}/${PHASE}`;

export type DriveStatus = 'Current' | 'InProgress';

/** A span of time during which something was true; `to` undefined: still true. */
interface Span {
  what: string;
  from: number;
  to?: number;
}

/** One answer of a poller: when the request was sent, when the answer came, what it was. */
interface Sample<T> {
  sentAt: number;
  answeredAt: number;
  value: T;
}

interface ReadyAnswer {
  status: number | 'no answer';
  body?: unknown;
}

interface GateAnswer {
  passed?: boolean;
  reason?: string;
  error?: string;
}

/** A status change as the GraphQL change log returns it. */
export interface LoggedChange {
  seq: string;
  at: string;
  cluster: string;
  scope: 'cluster' | 'phase' | 'resource' | 'condition';
  phase: { name: string } | null;
  resourceKey: string | null;
  fromStatus: string | null;
  toStatus: string | null;
}

/** A process of phaselog with its role and API URL (when it serves one). */
export interface PhaselogRun {
  role: 'all' | 'api' | 'worker';
  proc: PhaselogProcess;
  graphqlUrl?: string;
}

/** Options of {@link createFaultBed}. */
export interface FaultBedOptions {
  label: string;
  redisUrl: string;
  /** A PostgreSQL URL; omitted: phaselog's embedded default in the bed's state directory. */
  databaseUrl?: string;
}

const CHANGE_FIELDS = 'seq at cluster scope phase { name } resourceKey fromStatus toStatus';

export type FaultBed = Awaited<ReturnType<typeof createFaultBed>>;

/** Starts the emulated cluster and the bed around it; phaselog is started by the test. */
export async function createFaultBed(options: FaultBedOptions) {
  const clusterName = `fault-${options.label}`;
  const dir = mkdtempSync(path.join(tmpdir(), `phaselog-fault-${options.label}-`));
  // As root, phaselog runs its embedded PostgreSQL as the postgres user, who must pass through.
  chmodSync(dir, 0o711);
  const stateDir = path.join(dir, 'state');
  const emulator: Emulator = await startEmulator({ clusterName, bookmarkIntervalMs: 1000 });
  const kubeconfig = path.join(dir, 'kubeconfig');
  await emulator.writeKubeconfig(kubeconfig);
  const ref = { group: 'apps', kind: 'Deployment', namespace: NAMESPACE, name: PHASE, version: 'v1' };
  emulator.apply([readyDeployment(NAMESPACE, PHASE), cliUtilsInventory(NAMESPACE, PHASE, [ref])]);
  const redisPrefix = uniquePrefix(`fault-${options.label}`);

  /** Time 0 of the violation messages. */
  const start0 = Date.now();
  const runs: PhaselogRun[] = [];
  /** Spans during which phaselog could not observe the cluster (a fact the test made). */
  const blind: Span[] = [];
  /** Spans during which the API process's Redis or PostgreSQL was dead. */
  const serverDown: Span[] = [];
  /** Spans during which no worker recorded (killed, or its Redis had lost its schedulers). */
  const notRecording: Span[] = [];
  /** The Deployment's real status over time (as the test wrote it). */
  const truth: { at: number; status: DriveStatus }[] = [{ at: Date.now(), status: 'Current' }];
  /** Transitions the test made after {@link markBaseline}, in order. */
  const transitions: { from: DriveStatus; to: DriveStatus; at: number }[] = [];
  const readySamples: Sample<ReadyAnswer>[] = [];
  const gateSamples: Sample<GateAnswer>[] = [];
  let baselineSeq: bigint | undefined;
  /** Cluster outages the test made after the baseline. */
  let outageCount = 0;
  let polling = false;
  const pollers: Promise<void>[] = [];

  const apiUrl = (): string | undefined =>
    runs.filter((r) => r.graphqlUrl && r.proc.child.exitCode === null && r.proc.child.signalCode === null).at(-1)
      ?.graphqlUrl;

  async function start(role: PhaselogRun['role'], extraEnv: Record<string, string> = {}): Promise<PhaselogRun> {
    const env = cleanEnv({
      PHASELOG_STATE_DIR: stateDir,
      PHASELOG_PORT: '0',
      PHASELOG_DEMO: 'false',
      PHASELOG_SNAPSHOT_INTERVAL: `${INTERVAL_MS}ms`,
      PHASELOG_LOG_LEVEL: 'info',
      KUBECONFIG: kubeconfig,
      REDIS_URL: options.redisUrl,
      PHASELOG_REDIS_PREFIX: redisPrefix,
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
      ...extraEnv,
    });
    // `phaselog start` runs every role; `phaselog api` and `phaselog worker` run one.
    const proc = runPhaselog([role === 'all' ? 'start' : role], env);
    const run: PhaselogRun = { role, proc };
    runs.push(run);
    if (role === 'worker') {
      await proc.waitForLog((l) => l.msg === 'snapshot workers started', 60_000);
    } else {
      const line = await proc.waitForLog((l) => l.msg === 'phaselog API listening', 60_000);
      run.graphqlUrl = String(line.graphql);
    }
    return run;
  }

  async function kill(run: PhaselogRun): Promise<void> {
    run.proc.child.kill('SIGKILL');
    await exitOf(run.proc.child);
  }

  async function graphql<T>(query: string, variables: Record<string, unknown> = {}, url = apiUrl()): Promise<T> {
    if (!url) throw new Error('no phaselog API is running');
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length || !body.data)
      throw new Error(`GraphQL ${res.status}: ${JSON.stringify(body.errors ?? body)}`);
    return body.data;
  }

  /** The whole change log of the bed's cluster, read page by page after each page's last seq. */
  async function readLog(): Promise<LoggedChange[]> {
    const all: LoggedChange[] = [];
    let after: string | null = null;
    for (;;) {
      const page: {
        statusChanges: {
          edges: { cursor: string; node: LoggedChange }[];
          pageInfo: { hasNextPage: boolean; endCursor: string | null };
        };
      } = await graphql(
        `query($after: String, $cluster: String) { statusChanges(first: 100, after: $after, filter: { cluster: $cluster }) { edges { cursor node { ${CHANGE_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
        { after, cluster: clusterName },
      );
      all.push(...page.statusChanges.edges.map((e) => e.node));
      if (!page.statusChanges.pageInfo.hasNextPage || !page.statusChanges.pageInfo.endCursor) return all;
      after = page.statusChanges.pageInfo.endCursor;
    }
  }

  /** Writes the Deployment's status: Current (rolled out) or InProgress (one of two replicas updated). */
  function drive(status: DriveStatus): void {
    const previous = truth.at(-1)?.status ?? 'Current';
    if (previous === status) throw new Error(`the phase is already ${status}`);
    const updated = status === 'Current' ? 2 : 1;
    emulator.patchStatus(
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: NAMESPACE, name: PHASE },
      { updatedReplicas: updated, readyReplicas: updated, availableReplicas: updated },
    );
    const at = Date.now();
    truth.push({ at, status });
    if (baselineSeq !== undefined) transitions.push({ from: previous, to: status, at });
  }

  /** Phase-scope rows of the bed's phase after the baseline. */
  const phaseRows = (log: LoggedChange[]) =>
    log.filter((c) => c.scope === 'phase' && c.phase?.name === PHASE && BigInt(c.seq) > (baselineSeq ?? -1n));

  /** Waits until the log holds a phase-scope row for every transition made so far. */
  async function waitRecorded(what: string, timeoutMs = RECOVERY_MS): Promise<void> {
    await waitFor(
      async () => {
        const log = await readLog().catch(() => undefined);
        return log !== undefined && phaseRows(log).length >= transitions.length;
      },
      { timeoutMs, intervalMs: 250, what },
    );
  }

  /** Waits until the first snapshot recorded the phase as Current, then notes the log's last seq. */
  async function markBaseline(): Promise<void> {
    let last = 0n;
    await waitFor(
      async () => {
        const log = await readLog().catch(() => []);
        last = log.reduce((max, c) => (BigInt(c.seq) > max ? BigInt(c.seq) : max), 0n);
        // The phase's applier condition (kpt/Applied, its inventory records actuation) is written
        // just after the snapshot commits: part of the first snapshot, before the baseline.
        return (
          log.some((c) => c.scope === 'phase' && c.phase?.name === PHASE && c.toStatus === 'Current') &&
          log.some((c) => c.scope === 'condition' && c.phase?.name === PHASE)
        );
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'the first snapshot to record the phase as Current' },
    );
    baselineSeq = last;
  }

  /** Starts polling /readyz and the gate every 200 ms until {@link stopPolling}. */
  function startPolling(): void {
    polling = true;
    pollers.push(
      (async () => {
        while (polling) {
          const url = apiUrl();
          const sentAt = Date.now();
          let value: ReadyAnswer = { status: 'no answer' };
          if (url) {
            try {
              const res = await fetch(url.replace(/\/graphql$/, '/readyz'), { signal: AbortSignal.timeout(5000) });
              value = { status: res.status, body: await res.json().catch(() => undefined) };
            } catch {
              value = { status: 'no answer' };
            }
          }
          readySamples.push({ sentAt, answeredAt: Date.now(), value });
          await delay(200);
        }
      })(),
      (async () => {
        while (polling) {
          const sentAt = Date.now();
          let value: GateAnswer;
          try {
            const data = await graphql<{ gate: { passed: boolean; reason: string } }>(
              `
                query ($phase: PhaseRef!) {
                  gate(phase: $phase, status: Current, for: "2s") {
                    passed
                    reason
                  }
                }
              `,
              { phase: { cluster: clusterName, namespace: NAMESPACE, name: PHASE } },
            );
            value = data.gate;
          } catch (error) {
            value = { error: (error as Error).message };
          }
          gateSamples.push({ sentAt, answeredAt: Date.now(), value });
          await delay(200);
        }
      })(),
    );
  }

  async function stopPolling(): Promise<void> {
    polling = false;
    await Promise.all(pollers.splice(0));
  }

  function openSpan(list: Span[], what: string): void {
    list.push({ what, from: Date.now() });
  }
  function closeSpan(list: Span[], what: string, at = Date.now()): void {
    const span = list.find((s) => s.what === what && s.to === undefined);
    if (!span) throw new Error(`no open span "${what}"`);
    span.to = at;
  }

  /** The start of the span of `list` covering `t` (joined with the spans it touches), if any. */
  function coveringSince(list: Span[], t: number): number | undefined {
    let since: number | undefined;
    for (const span of [...list].sort((a, b) => a.from - b.from)) {
      if (span.from > t) break;
      const end = span.to ?? Infinity;
      if (end < t) continue;
      since = Math.min(since ?? span.from, span.from);
    }
    return since;
  }

  /** Since when the Deployment had been continuously not Current at `t`, if it was not. */
  function notCurrentSince(t: number): number | undefined {
    let since: number | undefined;
    for (const point of truth) {
      if (point.at > t) break;
      since = point.status === 'Current' ? undefined : (since ?? point.at);
    }
    return since;
  }

  /**
   * Gate answers that passed on data phaselog had not observed: while the Deployment had not been
   * Current for longer than {@link NOTICE_MS}, or while phaselog had been blind for that long.
   */
  function gateViolations(): string[] {
    const out: string[] = [];
    for (const s of gateSamples) {
      if (s.value.passed !== true) continue;
      const wrongSince = notCurrentSince(s.sentAt);
      const blindSince = coveringSince(blind, s.sentAt);
      if (wrongSince !== undefined && s.sentAt - wrongSince > NOTICE_MS) {
        out.push(
          `gate passed at +${s.sentAt - start0} ms while the Deployment had not been Current for ${s.sentAt - wrongSince} ms`,
        );
      } else if (blindSince !== undefined && s.sentAt - blindSince > NOTICE_MS) {
        out.push(
          `gate passed at +${s.sentAt - start0} ms while phaselog had been unable to observe the cluster for ${s.sentAt - blindSince} ms (${blind.map((b) => b.what).join(', ')})`,
        );
      }
    }
    return out;
  }

  /**
   * /readyz answers that were not true: 200 for a request made entirely while the API's Redis or
   * PostgreSQL was dead, or made more than {@link NOTICE_MS} into a span where no worker recorded.
   */
  function readyViolations(): string[] {
    const out: string[] = [];
    for (const s of readySamples) {
      if (s.value.status !== 200) continue;
      const down = serverDown.find((d) => d.from <= s.sentAt && (d.to ?? Infinity) >= s.answeredAt);
      if (down) {
        out.push(`/readyz said 200 at +${s.sentAt - start0} ms while ${down.what} (${JSON.stringify(s.value.body)})`);
        continue;
      }
      const idle = notRecording.find((d) => d.from + NOTICE_MS <= s.sentAt && (d.to ?? Infinity) >= s.answeredAt);
      if (idle)
        out.push(
          `/readyz said 200 at +${s.sentAt - start0} ms, ${s.sentAt - idle.from} ms into "${idle.what}" (${JSON.stringify(s.value.body)})`,
        );
    }
    return out;
  }

  /** Whether /readyz answered 200 at least once after `t`, and the last answer polled. */
  function readyAfter(t: number): { ready: boolean; last?: ReadyAnswer } {
    const later = readySamples.filter((s) => s.sentAt >= t);
    return { ready: later.some((s) => s.value.status === 200), last: later.at(-1)?.value };
  }

  /** Whether /readyz answered something other than 200 during [from, to] (the poller ran then). */
  function notReadyDuring(from: number, to: number): { saidNotReady: boolean; answers: number } {
    const within = readySamples.filter((s) => s.sentAt >= from && s.answeredAt <= to);
    return {
      saidNotReady: within.some((s) => s.value.status !== 200 && s.value.status !== 'no answer'),
      answers: within.length,
    };
  }

  /**
   * The judgement of the change log: seqs strictly increasing with no duplicates (over the whole log,
   * as read page by page), and after the baseline exactly one phase-scope row and one resource-scope
   * row per transition the test made, in order. Returns what is wrong (empty when right).
   */
  function judgeLog(log: LoggedChange[]): string[] {
    const problems: string[] = [];
    const seqs = log.map((c) => BigInt(c.seq));
    for (let i = 1; i < seqs.length; i++) {
      if ((seqs[i] as bigint) <= (seqs[i - 1] as bigint))
        problems.push(`seq ${seqs[i]} follows ${seqs[i - 1]}: not strictly increasing`);
    }
    if (new Set(seqs).size !== seqs.length) problems.push('a seq appears twice in the log');
    const expected = transitions.map((t) => `${t.from}->${t.to}`);
    const phase = phaseRows(log).map((c) => `${c.fromStatus}->${c.toStatus}`);
    const resource = log
      .filter((c) => c.scope === 'resource' && c.resourceKey === DEPLOYMENT_KEY && BigInt(c.seq) > (baselineSeq ?? -1n))
      .map((c) => `${c.fromStatus}->${c.toStatus}`);
    if (JSON.stringify(phase) !== JSON.stringify(expected))
      problems.push(`phase changes recorded ${JSON.stringify(phase)}, made ${JSON.stringify(expected)}`);
    if (JSON.stringify(resource) !== JSON.stringify(expected))
      problems.push(`Deployment changes recorded ${JSON.stringify(resource)}, made ${JSON.stringify(expected)}`);
    // Each outage the test made is one Unreachable and one Reachable; other faults are none.
    const outages = Array.from({ length: outageCount }, () => [
      'Reachable->Unreachable',
      'Unreachable->Reachable',
    ]).flat();
    // A snapshot that ends a span no snapshot observed may say so (from Unobserved): phaselog's own
    // blindness, at most once per span the test made it blind.
    const cluster = clusterRows(log).filter((c) => !c.startsWith('Unobserved->'));
    const unobserved = clusterRows(log).length - cluster.length;
    if (JSON.stringify(cluster) !== JSON.stringify(outages))
      problems.push(`cluster changes recorded ${JSON.stringify(cluster)}, expected ${JSON.stringify(outages)}`);
    if (unobserved > blind.length)
      problems.push(`${unobserved} unobserved spans recorded for ${blind.length} blind spans`);
    const others = log.filter(
      (c) =>
        BigInt(c.seq) > (baselineSeq ?? -1n) &&
        c.scope !== 'cluster' &&
        !(c.scope === 'phase' && c.phase?.name === PHASE) &&
        !(c.scope === 'resource' && c.resourceKey === DEPLOYMENT_KEY),
    );
    if (others.length) problems.push(`changes nobody made: ${JSON.stringify(others)}`);
    return problems;
  }

  /** Cluster-scope rows after the baseline, as from->to. */
  function clusterRows(log: LoggedChange[]): string[] {
    return log
      .filter((c) => c.scope === 'cluster' && BigInt(c.seq) > (baselineSeq ?? -1n))
      .map((c) => `${c.fromStatus}->${c.toStatus}`);
  }

  /** The first and last of a run of violations and how many there were, not hundreds of lines. */
  function summarise(violations: string[]): string[] {
    if (violations.length <= 2) return violations;
    return [`${violations.length} times, first: ${violations[0]}`, `last: ${violations.at(-1)}`];
  }

  /** Everything the observers found wrong, with the processes' logs when something is. */
  async function verdict(extra: string[] = []): Promise<string[]> {
    await stopPolling();
    const log = await readLog();
    const problems = [...extra, ...judgeLog(log), ...summarise(gateViolations()), ...summarise(readyViolations())];
    // The observers must have watched each fault, or their silence proves nothing (a span shorter
    // than a few polls may fall between two).
    for (const span of [...blind, ...serverDown, ...notRecording]) {
      const to = span.to ?? Date.now();
      if (to - span.from < 2000) continue;
      if (!readySamples.some((s) => s.sentAt >= span.from && s.sentAt <= to))
        problems.push(`/readyz was not polled during "${span.what}"`);
      if (!gateSamples.some((s) => s.sentAt >= span.from && s.sentAt <= to))
        problems.push(`no gate was asked during "${span.what}"`);
    }
    if (process.env.PHASELOG_FAULTS_TRACE) {
      const line = (s: Sample<unknown>) => `+${s.sentAt - start0} ${JSON.stringify(s.value).slice(0, 200)}`;
      process.stderr.write(
        `readyz:\n${readySamples.map(line).join('\n')}\ngate:\n${gateSamples.map(line).join('\n')}\nspans: ${JSON.stringify({ blind, serverDown, notRecording, start0 })}\n`,
      );
    }
    return problems;
  }

  /**
   * Cuts the cluster off (every request reset, watches ended) for `durationMs`, running `during`
   * once it is cut off; phaselog is blind meanwhile.
   */
  async function clusterOutage(durationMs: number, during?: () => void): Promise<void> {
    outageCount += 1;
    const what = `cluster outage ${outageCount}`;
    const remove = emulator.injectFault({ effect: 'reset' });
    emulator.closeWatches();
    openSpan(blind, what);
    const from = Date.now();
    during?.();
    await waitFor(() => Date.now() - from >= durationMs, { timeoutMs: durationMs + 5000, intervalMs: 100, what });
    remove();
    closeSpan(blind, what);
  }

  /**
   * Opens a "not recording" span now and closes it once the worker's job scheduler for the cluster
   * is back in `redisUrl` (read with BullMQ's own API), in the background until polling stops.
   */
  function untilSchedulerBack(what: string, redisUrl: string): void {
    openSpan(notRecording, what);
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue(SNAPSHOT_QUEUE, { connection, prefix: redisPrefix });
    pollers.push(
      (async () => {
        try {
          while (polling) {
            const schedulers = await queue.getJobSchedulers().catch(() => []);
            if (schedulers.some((s) => s.key === snapshotSchedulerId(clusterName))) {
              closeSpan(notRecording, what);
              return;
            }
            await delay(200);
          }
        } finally {
          await queue.close();
          connection.disconnect();
        }
      })(),
    );
  }

  async function close(): Promise<void> {
    await stopPolling();
    for (const run of runs) if (run.proc.child.exitCode === null && run.proc.child.signalCode === null) await kill(run);
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }

  return {
    clusterName,
    stateDir,
    redisPrefix,
    emulator,
    runs,
    start,
    kill,
    graphql,
    readLog,
    drive,
    waitRecorded,
    markBaseline,
    /** The log's last seq when the baseline was marked. */
    baselineSeq: () => baselineSeq,
    startPolling,
    stopPolling,
    facts: {
      blind: {
        open: (what: string) => openSpan(blind, what),
        close: (what: string, at?: number) => closeSpan(blind, what, at),
      },
      serverDown: {
        open: (what: string) => openSpan(serverDown, what),
        close: (what: string, at?: number) => closeSpan(serverDown, what, at),
      },
      notRecording: {
        open: (what: string) => openSpan(notRecording, what),
        close: (what: string, at?: number) => closeSpan(notRecording, what, at),
      },
    },
    clusterOutage,
    untilSchedulerBack,
    readyAfter,
    notReadyDuring,
    clusterRows,
    judgeLog,
    verdict,
    close,
    /** The processes' output, for a failing assertion's message. */
    output: () =>
      runs
        .map(
          (r, i) =>
            `--- ${r.role} #${i} stdout (tail)\n${r.proc.stdout().slice(-4000)}\n--- stderr\n${r.proc.stderr().slice(-2000)}`,
        )
        .join('\n'),
  };
}
