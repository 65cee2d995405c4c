/**
 * `phaselog emulator`: the Kubernetes API emulator as a user tool.
 *
 *   phaselog emulator [start] [--cluster NAME]... [--port N] [--kubeconfig PATH] [--load FILE]...
 *   phaselog emulator fault <cluster> reset|refuse|hang|latency <duration>|status <code>|clear [--for D]
 *   phaselog emulator faults [cluster]
 *
 * `start` serves one emulated cluster per `--cluster` (consecutive ports), writes a kubeconfig with
 * a context per cluster and a control file (URL and token of the fault-control endpoint, mode 0600),
 * and runs until SIGINT/SIGTERM. `fault` and `faults` talk to that endpoint.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { parseDuration } from '../duration.ts';
import {
  startFaultControl,
  writeControlFile,
  type ControlledFault,
  type FaultControl,
  type FaultRequest,
} from './control.ts';
import { startEmulator, type Emulator, type EmulatorVerb } from './index.ts';
import { mergeKubeconfigs } from './kubeconfig.ts';

const TOKEN_ENV = 'PHASELOG_EMULATOR_CONTROL_TOKEN';
const CONTROL_FILE = 'emulator.control.json';
const VERBS: EmulatorVerb[] = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'discovery',
];

/** A usage mistake: exit code 2, like the rest of the CLI. */
class UsageError extends Error {
  override name = 'UsageError';
}

/** Parses a duration that must carry a unit (`2s`, `500ms`, `1m30s`): a bare number is ambiguous. */
export function parseDurationWithUnit(text: string, what: string): number {
  const ms = /^\d+(\.\d+)?$/.test(text.trim()) ? undefined : parseDuration(text);
  if (ms === undefined)
    throw new UsageError(`${what} must be a duration with a unit (500ms, 2s, 5m, 1h); got "${text}"`);
  if (ms <= 0) throw new UsageError(`${what} must be longer than zero; got "${text}"`);
  return ms;
}

function parsePort(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n > 65535)
      throw new InvalidArgumentError(`${flag} must be an integer between 0 and 65535, got "${value}"`);
    return n;
  };
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

interface StartOptions {
  port: number;
  host: string;
  kubeconfig: string;
  load: string[];
  token?: string;
  allowedHost: string[];
  tls: boolean;
  cluster?: string[];
  context?: string;
  rollouts: boolean;
  control: boolean;
  controlPort: number;
  controlFile?: string;
  controlToken?: string;
}

interface ControlOptions {
  controlFile: string;
  controlUrl?: string;
  controlToken?: string;
}

interface FaultOptions extends ControlOptions {
  for?: string;
  times?: string;
  verb?: string;
  resource?: string;
  namespace?: string;
}

async function writePrivateFile(path: string, text: string): Promise<void> {
  // Removing first makes the 0600 mode stick even if an older file with wider permissions exists.
  await rm(path, { force: true });
  await writeFile(path, text, { mode: 0o600, flag: 'wx' });
}

async function runStart(opts: StartOptions): Promise<number> {
  const names = opts.cluster ?? [opts.context ?? 'emulated'];
  if (new Set(names).size !== names.length)
    throw new UsageError(`--cluster names must differ; got ${names.join(', ')}`);
  const bad = names.find((n) => !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n));
  if (bad !== undefined) throw new UsageError(`--cluster "${bad}" must be lowercase letters, digits, '-' and '.'`);
  if (opts.controlToken !== undefined && opts.controlToken.length < 16)
    throw new UsageError(`--control-token (or ${TOKEN_ENV}) must be at least 16 characters`);
  const clusters: Record<string, Emulator> = {};
  let control: FaultControl | undefined;
  const controlFile = opts.controlFile ?? join(dirname(opts.kubeconfig), CONTROL_FILE);
  const closeAll = async (): Promise<void> => {
    await control?.close();
    await Promise.all(Object.values(clusters).map((em) => em.close()));
  };
  try {
    for (const [i, name] of names.entries()) {
      clusters[name] = await startEmulator({
        port: opts.port === 0 ? 0 : opts.port + i,
        host: opts.host,
        tls: opts.tls,
        clusterName: name,
        completeRollouts: opts.rollouts,
        ...(opts.token !== undefined ? { token: opts.token } : {}),
        allowedHosts: opts.allowedHost,
      });
    }
    for (const file of opts.load) {
      for (const em of Object.values(clusters)) {
        const n = await em.loadFile(file);
        if (em === Object.values(clusters)[0])
          console.log(`loaded ${n} objects from ${file}${names.length > 1 ? ' into every cluster' : ''}`);
      }
    }
    await writePrivateFile(opts.kubeconfig, mergeKubeconfigs(Object.values(clusters).map((em) => em.kubeconfig())));
    if (opts.control) {
      control = await startFaultControl({
        clusters,
        host: '127.0.0.1',
        port: opts.controlPort,
        token: opts.controlToken ?? randomBytes(32).toString('base64url'),
      });
      await writeControlFile(controlFile, control, names);
    }
  } catch (e) {
    await closeAll();
    if (e instanceof UsageError) throw e;
    console.error(`cannot start the emulator: ${(e as Error).message}`);
    return 1;
  }
  for (const [name, em] of Object.entries(clusters))
    console.log(`Kubernetes API emulator "${name}" listening on ${em.url}`);
  console.log(`kubeconfig written to ${opts.kubeconfig}; try: kubectl --kubeconfig ${opts.kubeconfig} get namespaces`);
  if (control) {
    console.log(`fault control on ${control.url}; URL and token in ${controlFile} (mode 0600)`);
    console.log(
      `try: phaselog emulator fault ${names[0] ?? 'emulated'} status 503 --for 30s${opts.controlFile !== undefined || dirname(opts.kubeconfig) !== '.' ? ` --control-file ${controlFile}` : ''}`,
    );
  }
  console.log('Press Ctrl-C to stop.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await closeAll();
  if (control) await rm(controlFile, { force: true });
  console.log('emulator stopped');
  return 0;
}

async function readControl(opts: ControlOptions): Promise<{ url: string; token: string }> {
  let fromFile: { url?: unknown; token?: unknown } = {};
  if (opts.controlUrl === undefined || opts.controlToken === undefined) {
    try {
      fromFile = JSON.parse(await readFile(opts.controlFile, 'utf8')) as typeof fromFile;
    } catch (e) {
      throw new UsageError(
        `cannot read the control file ${opts.controlFile} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); is \`phaselog emulator\` running? Pass --control-file, or --control-url with --control-token (or ${TOKEN_ENV})`,
      );
    }
  }
  const url = opts.controlUrl ?? (typeof fromFile.url === 'string' ? fromFile.url : undefined);
  const token = opts.controlToken ?? (typeof fromFile.token === 'string' ? fromFile.token : undefined);
  if (url === undefined || token === undefined)
    throw new UsageError(`the control file ${opts.controlFile} lacks url or token`);
  return { url, token };
}

async function callControl(opts: ControlOptions, method: string, path: string, body?: unknown): Promise<unknown> {
  const { url, token } = await readControl(opts);
  let res: Response;
  try {
    res = await fetch(new URL(path, url), {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch (e) {
    throw new Error(
      `cannot reach the emulator's fault control at ${url}: ${(e as { cause?: Error }).cause?.message ?? (e as Error).message}`,
    );
  }
  const answer = (await res.json().catch(() => ({}))) as { error?: string };
  if (!res.ok) {
    const message = answer.error ?? `HTTP ${res.status}`;
    throw res.status === 400
      ? new UsageError(message)
      : new Error(`fault control refused (HTTP ${res.status}): ${message}`);
  }
  return answer;
}

function describeFault(f: ControlledFault): string {
  const what =
    f.effect === 'status' ? `status ${f.statusCode}` : f.effect === 'latency' ? `latency ${f.latencyMs}ms` : f.effect;
  const match = Object.entries(f.match ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  return [
    what,
    match.length > 0 ? `on ${match.join(',')}` : '',
    f.remaining !== undefined ? `${f.remaining} left` : '',
    f.expiresAt !== undefined ? `until ${f.expiresAt}` : '',
  ]
    .filter((s) => s !== '')
    .join(' ');
}

function buildFaultRequest(effect: string, value: string | undefined, opts: FaultOptions): FaultRequest {
  const needsValue = effect === 'latency' || effect === 'status';
  if (needsValue && value === undefined)
    throw new UsageError(
      effect === 'latency'
        ? 'latency needs a duration, e.g. `latency 2s`'
        : 'status needs an HTTP code, e.g. `status 503`',
    );
  if (!needsValue && value !== undefined) throw new UsageError(`${effect} takes no value; got "${value}"`);
  let request: FaultRequest;
  switch (effect) {
    case 'reset':
    case 'refuse':
    case 'hang':
      request = { effect };
      break;
    case 'latency':
      request = { effect, latencyMs: parseDurationWithUnit(value ?? '', 'latency') };
      break;
    case 'status': {
      const code = Number(value);
      if (!/^\d+$/.test(value ?? '') || code < 400 || code > 599)
        throw new UsageError(`status must be an HTTP error code between 400 and 599; got "${value}"`);
      request = { effect, statusCode: code };
      break;
    }
    default:
      throw new UsageError(
        `unknown fault "${effect}"; use reset, refuse, hang, latency <duration>, status <code> or clear`,
      );
  }
  if (opts.for !== undefined) request.forMs = parseDurationWithUnit(opts.for, '--for');
  if (opts.times !== undefined) {
    if (!/^[1-9]\d*$/.test(opts.times)) throw new UsageError(`--times must be a positive integer; got "${opts.times}"`);
    request.times = Number(opts.times);
  }
  const match: NonNullable<FaultRequest['match']> = {};
  if (opts.verb !== undefined) {
    if (!VERBS.includes(opts.verb as EmulatorVerb))
      throw new UsageError(`--verb must be one of ${VERBS.join(', ')}; got "${opts.verb}"`);
    match.verb = opts.verb as EmulatorVerb;
  }
  if (opts.resource !== undefined) match.resource = opts.resource;
  if (opts.namespace !== undefined) match.namespace = opts.namespace;
  if (Object.keys(match).length > 0) request.match = match;
  return request;
}

async function runFault(
  cluster: string,
  effect: string,
  value: string | undefined,
  opts: FaultOptions,
): Promise<number> {
  const path = `/v1/clusters/${encodeURIComponent(cluster)}/faults`;
  if (effect === 'clear') {
    if (
      value !== undefined ||
      opts.for !== undefined ||
      opts.times !== undefined ||
      opts.verb !== undefined ||
      opts.resource !== undefined ||
      opts.namespace !== undefined
    ) {
      throw new UsageError('clear takes no value or options: it removes every fault of the cluster');
    }
    const answer = (await callControl(opts, 'DELETE', path)) as { cleared: number };
    console.log(`cleared the faults of ${cluster} (${answer.cleared} added through fault control)`);
    return 0;
  }
  const fault = (await callControl(opts, 'POST', path, buildFaultRequest(effect, value, opts))) as ControlledFault;
  console.log(`fault ${fault.id} on ${cluster}: ${describeFault(fault)}`);
  return 0;
}

async function runList(cluster: string | undefined, opts: ControlOptions): Promise<number> {
  const path = cluster === undefined ? '/v1/faults' : `/v1/clusters/${encodeURIComponent(cluster)}/faults`;
  const answer = (await callControl(opts, 'GET', path)) as { faults: ControlledFault[] };
  if (answer.faults.length === 0) {
    console.log(`no faults${cluster !== undefined ? ` on ${cluster}` : ''}`);
    return 0;
  }
  const rows = answer.faults.map((f) => [f.id, f.cluster, describeFault(f)]);
  const width = (i: number): number =>
    Math.max(...[['ID', 'CLUSTER'][i] ?? '', ...rows.map((r) => r[i] ?? '')].map((s) => s.length));
  const line = (r: string[]): string =>
    `${(r[0] ?? '').padEnd(width(0))}   ${(r[1] ?? '').padEnd(width(1))}   ${r[2] ?? ''}`;
  console.log(line(['ID', 'CLUSTER', 'FAULT']));
  for (const r of rows) console.log(line(r));
  return 0;
}

function addControlOptions(cmd: Command): Command {
  return cmd
    .option('--control-file <path>', 'control file written by `phaselog emulator`', `./${CONTROL_FILE}`)
    .option('--control-url <url>', 'fault-control URL (instead of the control file)')
    .addOption(
      new Option('--control-token <token>', 'fault-control token (instead of the control file)').env(TOKEN_ENV),
    );
}

function buildProgram(setCode: (code: number) => void): Command {
  const program = new Command('phaselog emulator')
    .description('A Kubernetes API emulator to try phaselog and test pipelines against, with faults on demand')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });

  program
    .command('start', { isDefault: true })
    .description('serve emulated clusters until Ctrl-C (the default command)')
    .option(
      '--cluster <name>',
      'an emulated cluster (repeatable; each gets the next port and a kubeconfig context)',
      collect,
    )
    .option('--port <n>', 'port of the first cluster (0 = any free port)', parsePort('--port'), 6443)
    .option('--host <addr>', 'interface to bind', '127.0.0.1')
    .option('--kubeconfig <path>', 'where to write the kubeconfig', './emulator.kubeconfig')
    .option('--load <file>', 'YAML/JSON manifests to load into every cluster at start (repeatable)', collect, [])
    .option('--token <token>', 'require this bearer token on the Kubernetes API')
    .option(
      '--allowed-host <name>',
      'a host name clients may reach it by, besides loopback names and IP addresses (repeatable; without --token other names get 421)',
      collect,
      [],
    )
    .option('--tls', 'serve HTTPS with a self-signed certificate (needs openssl)', false)
    .option(
      '--no-rollouts',
      'leave workload status alone (by default API writes to Deployments, StatefulSets and DaemonSets complete their rollout at once)',
    )
    .option(
      '--control-port <n>',
      'port of the fault-control endpoint on 127.0.0.1 (0 = any free port)',
      parsePort('--control-port'),
      0,
    )
    .option(
      '--control-file <path>',
      `where to write the control URL and token (default: ${CONTROL_FILE} next to the kubeconfig)`,
    )
    .addOption(new Option('--control-token <token>', 'fault-control token (default: random)').env(TOKEN_ENV))
    .option('--no-control', 'serve no fault-control endpoint')
    .addOption(new Option('--context <name>', 'old name of --cluster for one cluster').hideHelp())
    .addHelpText(
      'after',
      '\nExample:\n  phaselog emulator --cluster staging --cluster prod --load demo.yaml\n  kubectl --kubeconfig ./emulator.kubeconfig --context prod get deployments -A',
    )
    .action(async (opts: StartOptions) => setCode(await runStart(opts)));

  addControlOptions(
    program
      .command('fault')
      .description('give a running emulator a fault, or clear its faults')
      .argument('<cluster>', 'emulated cluster name')
      .argument('<fault>', 'reset | refuse | hang | latency | status | clear')
      .argument('[value]', 'duration for latency (2s), HTTP code for status (503)')
      .option('--for <duration>', 'remove the fault after this long (30s, 5m)')
      .option('--times <n>', 'hit only the next n matching requests')
      .option('--verb <verb>', `hit only this verb (${VERBS.join(', ')})`)
      .option('--resource <plural>', 'hit only this resource, e.g. deployments')
      .option('--namespace <ns>', 'hit only requests in this namespace'),
  )
    .addHelpText(
      'after',
      `
Faults:
  reset            connections are reset without an answer
  refuse           the cluster stops listening (connection refused), open watches are cut
  hang             requests are never answered
  latency <d>      requests wait d (500ms, 2s) and then proceed
  status <code>    requests fail with this HTTP code (400-599) and a Kubernetes Status body
  clear            remove every fault of the cluster

Examples:
  phaselog emulator fault prod status 503 --for 30s
  phaselog emulator fault prod latency 2s --resource deployments
  phaselog emulator fault prod refuse --for 1m
  phaselog emulator fault prod clear`,
    )
    .action(async (cluster: string, fault: string, value: string | undefined, opts: FaultOptions) =>
      setCode(await runFault(cluster, fault, value, opts)),
    );

  addControlOptions(
    program.command('faults').description('list the faults in force').argument('[cluster]', 'only this cluster'),
  ).action(async (cluster: string | undefined, opts: ControlOptions) => setCode(await runList(cluster, opts)));
  return program;
}

/** Runs `phaselog emulator ...`; resolves with the process exit code (for `start`, once the server has stopped). */
export async function runEmulatorCli(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError)
      return e.code === 'commander.helpDisplayed' || e.code === 'commander.help' || e.code === 'commander.version'
        ? 0
        : 2;
    if (e instanceof UsageError) {
      console.error(`error: ${e.message}`);
      return 2;
    }
    console.error(`error: ${(e as Error).message}`);
    return 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await runEmulatorCli(process.argv.slice(2));
}
