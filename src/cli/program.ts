/**
 * The `phaselog` command tree on commander: each command declares its own options, so a flag that
 * does nothing for a command is an error with a hint, never silently accepted. Process roles
 * (`start`, `api`, `worker`, `migrate`) run phaselog itself; client commands ask a running server's
 * GraphQL API, so the CLI sees exactly what any other API client sees.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { VERSION } from '../runtime/paths.ts';
import { CliError, EXIT } from './errors.ts';
import type { CommandContext } from './context.ts';
import { OUTPUT_FORMATS } from './format.ts';
import type { OutputFormat } from './format.ts';
import { parseStatus, STATUS_MODES, STATUSES, type StatusOutput } from './commands/status.ts';

/** What a command's action returns: its exit code. */
type Run = (ctx: CommandContext) => Promise<number>;

/** How the tree runs client commands and process roles; tests and main.ts give the real ones. */
export interface ProgramHooks {
  /** Run a client command against the server named by --url/--token (or the environment). */
  client(flags: { url?: string; token?: string }, run: Run): Promise<void>;
  /** Start a process role. */
  serve(role: 'start' | 'api' | 'worker', overrides: { 'server.host'?: string; 'server.port'?: string }): Promise<void>;
  migrate(): Promise<void>;
  emulator(args: string[]): Promise<void>;
  /** Where help and errors go. */
  write(stream: 'out' | 'err', text: string): void;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];
function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('a whole number from 1 to 100');
  return n;
}
function parseContext(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 1000)
    throw new InvalidArgumentError('Lines of context are a whole number from 0 to 1000.');
  return Number(value);
}

/** A repeatable flag whose every value must be one of `choices`. */
const collectChoice =
  (choices: readonly string[]) =>
  (value: string, previous: string[] = []) => {
    if (!choices.includes(value)) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    return [...previous, value];
  };
const collectStatuses = (value: string, previous: string[] = []) => [
  ...previous,
  ...value.split(',').filter(Boolean).map(parseStatus),
];

interface OutputFlags {
  output: OutputFormat;
  headers: boolean;
}
interface ClientFlags {
  url?: string;
  token?: string;
}
interface ScopeFlags {
  cluster?: string[];
  namespace?: string;
  allNamespaces?: boolean;
}

function clientOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--url <url>', 'GraphQL endpoint of the phaselog to ask')
        .env('PHASELOG_URL')
        .default(undefined, 'http://127.0.0.1:4000/graphql'),
    )
    .addOption(new Option('--token <secret>', 'API token (prefer the environment variable)').env('PHASELOG_TOKEN'));
}

function outputOptions(cmd: Command, formats: readonly string[] = OUTPUT_FORMATS): Command {
  return cmd
    .addOption(new Option('-o, --output <format>', 'output format').choices(formats).default('table'))
    .option('--no-headers', 'leave out the header row of tables');
}

function scopeOptions(cmd: Command, what: string): Command {
  return cmd
    .option('--cluster <name>', `only ${what} in this cluster (repeat for several)`, collect)
    .addOption(new Option('-n, --namespace <namespace>', `only ${what} in this namespace`).conflicts('allNamespaces'))
    .option('-A, --all-namespaces', `${what} in every namespace (the default without -n)`);
}

const client = (hooks: ProgramHooks, flags: ClientFlags, run: Run) =>
  hooks.client({ ...(flags.url ? { url: flags.url } : {}), ...(flags.token ? { token: flags.token } : {}) }, run);

/** Load a command module only when it runs: `phaselog --help` and completion stay fast. */
const load = {
  status: () => import('./commands/status.ts'),
  history: () => import('./commands/history.ts'),
  manifest: () => import('./commands/manifest.ts'),
  gate: () => import('./commands/gate.ts'),
  plan: () => import('./commands/plan.ts'),
  clusters: () => import('./commands/clusters.ts'),
  notifications: () => import('./commands/notifications.ts'),
  report: () => import('./commands/report.ts'),
  token: () => import('./commands/token.ts'),
  version: () => import('./commands/version.ts'),
  completion: () => import('./completion.ts'),
};

const PHASE_HELP =
  'cluster/namespace/name, cluster/name, or a name that is unique (with --cluster and -n filling in the rest)';
const TIME_HELP = 'RFC 3339 (2026-11-17T14:00:00Z), a date (2026-11-17), "now", or a duration ago (90m, 7d)';

export function buildProgram(hooks: ProgramHooks): Command {
  const program = new Command('phaselog')
    .description('Flight recorder and live status gateway for Kubernetes deployment phases')
    .version(VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError(false)
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => hooks.write('out', text),
      writeErr: (text) => hooks.write('err', text),
      // One line: commander's message plus where to read more.
      outputError: () => {},
    })
    .addHelpText(
      'after',
      `
A phase is ${PHASE_HELP}.
Times: ${TIME_HELP}. Durations need a unit: 30s, 10m, 1h30m, 7d.

Exit codes: 0 ok, 1 gate not passed (or timed out), 2 bad usage or input, 3 server unreachable or
failing, 4 no such phase/cluster/token, 5 missing or insufficient token.`,
    );

  // Process roles.
  const role = (name: 'start' | 'api' | 'worker', description: string) =>
    program
      .command(name)
      .description(description)
      .option('--host <addr>', 'address the API listens on (PHASELOG_HOST)')
      .option('--port <port>', 'port the API listens on (PHASELOG_PORT)')
      .action((flags: { host?: string; port?: string }) =>
        hooks.serve(name, { 'server.host': flags.host, 'server.port': flags.port }),
      );
  role('start', 'run the API, the snapshot workers and the schedulers in one process (the default)');
  role('api', 'run only the GraphQL API and the web UI');
  role('worker', 'run only the snapshot workers and schedulers');
  program
    .command('migrate')
    .description('apply database migrations to DATABASE_URL and exit')
    .action(() => hooks.migrate());
  program
    .command('emulator')
    .description(
      'emulated Kubernetes clusters to try phaselog or test pipelines against, with faults on demand (emulator start | fault | faults; phaselog emulator --help)',
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[args...]')
    .action((args: string[]) => hooks.emulator(args));

  // Client commands.
  const status = program
    .command('status')
    .description('phases now, like flux get: NAME CLUSTER STATUS SINCE MESSAGE; one phase with its resources')
    .argument('[phase]', PHASE_HELP)
    .addOption(
      new Option(
        '--status <status>',
        `only phases with this status (repeat, or comma-separated: ${STATUSES.join(', ')})`,
      ).argParser(collectStatuses),
    )
    .option('-l, --selector <labels>', 'only phases with these labels (key=value,...)')
    .addOption(
      new Option('--source <source>', 'only phases from this inventory source').choices([
        'cli-utils',
        'resourcegroup',
        'flux',
        'argocd',
        'selector',
        'config',
        'owner',
      ]),
    )
    .option('--at <time>', 'the phases as they were at this time')
    .option(
      '--condition <type=Status>',
      'only phases whose condition from a check has this status now, e.g. health=False (repeatable)',
      (value: string, all: string[] = []) => [...all, value],
    )
    .addOption(
      new Option('--sort <order>', 'severity: most severe first; name: by cluster, namespace, name')
        .choices(['severity', 'name'])
        .default('severity'),
    )
    .option('-w, --watch', 'after the list, stream status changes until Ctrl-C')
    .option(
      '--tree',
      'with a phase: each resource with the objects it owns (ReplicaSets, Pods) and their statuses, live',
    )
    .option(
      '--after <seq>',
      'with --watch: resume after this change seq (the last `seq` a previous watch printed); skips the list',
    );
  scopeOptions(outputOptions(clientOptions(status), [...OUTPUT_FORMATS, ...STATUS_MODES]), 'phases');
  status.addHelpText(
    'after',
    `
Examples:
  phaselog status                                  every phase, worst first
  phaselog status -n shop --status Failed,InProgress
  phaselog status -o name --status Failed          names to pipe into other commands
  phaselog status prod/shop/api -o wide            one phase with its resources
  phaselog status -o summary                       counts per status only, phase by phase
  phaselog status prod/shop/api --tree              its Deployments' ReplicaSets and Pods, live
  phaselog status prod/shop/api -o detail --at 2h  each resource's stored object (redacted) two hours ago
  phaselog status prod/shop/api -o rsync           the applier's status of each member (actuation, reconcile, sync), with counts
  phaselog status --at 2h                          the fleet two hours ago
  phaselog status --condition health=False         phases whose health check fails now
  phaselog status -w -o json | jq .                NDJSON: the phases, then each change (with its seq)
  phaselog status -w -o json --after 1234          resume that stream after change 1234`,
  );
  status.action(
    (
      phase: string | undefined,
      f: Omit<OutputFlags, 'output'> & { output: StatusOutput } & ClientFlags &
        ScopeFlags & {
          status?: string[];
          condition?: string[];
          selector?: string;
          source?: string;
          at?: string;
          sort: 'severity' | 'name';
          watch?: boolean;
          after?: string;
          tree?: boolean;
        },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.status()).runStatus(ctx, {
          ...(phase ? { phase } : {}),
          output: f.output,
          headers: f.headers,
          watch: f.watch ?? false,
          sort: f.sort,
          clusters: f.cluster ?? [],
          statuses: [...new Set(f.status ?? [])],
          ...(f.condition ? { conditions: f.condition } : {}),
          ...(f.namespace ? { namespace: f.namespace } : {}),
          ...(f.selector ? { selector: f.selector } : {}),
          ...(f.source ? { source: f.source } : {}),
          ...(f.at ? { at: f.at } : {}),
          ...(f.after !== undefined ? { after: f.after } : {}),
          ...(f.tree === true ? { tree: true } : {}),
        }),
      ),
  );

  const history = program
    .command('history')
    .description("the phase's status intervals; --all: every change of it and its resources")
    .argument('<phase>', PHASE_HELP)
    .option('--all', 'every status change of the phase and its resources, not the intervals')
    .option('--from <time>', 'start of the window (default 7d ago)')
    .option('--to <time>', 'end of the window (default now)');
  outputOptions(clientOptions(history), ['table', 'wide', 'json', 'yaml'])
    .option('--cluster <name>', 'the cluster of the phase')
    .option('-n, --namespace <namespace>', 'the namespace of the phase');
  history.addHelpText(
    'after',
    '\nExamples:\n  phaselog history prod/shop/api --from 24h\n  phaselog history api --all -o json',
  );
  history.action(
    (
      phase: string,
      f: OutputFlags &
        ClientFlags & { all?: boolean; from?: string; to?: string; cluster?: string; namespace?: string },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.history()).runHistory(ctx, {
          phase,
          all: f.all ?? false,
          output: f.output,
          headers: f.headers,
          ...pick(f, ['from', 'to', 'cluster', 'namespace']),
        }),
      ),
  );

  const manifest = program
    .command('manifest')
    .description("what the phase's inventory listed (now, or at --at); --diff: how it changed, with content diffs")
    .argument('<phase>', PHASE_HELP)
    .option('--at <time>', 'the manifest in effect at this time')
    .option('--diff', 'the manifest versions, newest first, with what changed in each')
    .option('--context <lines>', 'with --diff: lines of context around each change (0 to 1000)', parseContext, 3);
  outputOptions(clientOptions(manifest), ['table', 'json', 'yaml'])
    .option('--cluster <name>', 'the cluster of the phase')
    .option('-n, --namespace <namespace>', 'the namespace of the phase');
  manifest.addHelpText(
    'after',
    '\nExamples:\n  phaselog manifest prod/shop/api --at 2026-11-17T14:00:00Z\n  phaselog manifest prod/shop/api --diff',
  );
  manifest.action(
    (
      phase: string,
      f: OutputFlags &
        ClientFlags & { at?: string; diff?: boolean; context: number; cluster?: string; namespace?: string },
    ) =>
      client(hooks, f, async (ctx) => {
        if (f.at && f.diff)
          throw new CliError('--diff lists every version; --at picks one: use one of them', EXIT.usage);
        return (await load.manifest()).runManifest(ctx, {
          phase,
          diff: f.diff ?? false,
          context: f.context,
          output: f.output,
          headers: f.headers,
          ...pick(f, ['at', 'cluster', 'namespace']),
        });
      }),
  );

  const gate = program
    .command('gate')
    .description(
      'exit 0 if the phase (or --plan) has held --status (default Current) for the window --for, else 1; --wait: until it does',
    )
    .argument('[phase]', PHASE_HELP)
    .option('--plan <name>', 'gate on a plan instead: Current (every phase of it) for the window, on fresh reads')
    .requiredOption('--for <duration>', 'how long the status must have held, e.g. 10m')
    .addOption(new Option('--status <status>', 'the status it must hold').default('Current').argParser(parseStatus))
    .option(
      '--condition <type=Status[:window]>',
      'a condition that must hold too, from a check or the inventory holder, e.g. health=True, version=True:5m or Synced=True (argocd/Synced, flux/Synced; window: --for when omitted); repeatable',
      (value: string, all: string[] = []) => [...all, value],
    )
    .option('--wait', 'keep checking until the gate passes or --timeout ends (progress on stderr)')
    .option('--timeout <duration>', 'with --wait: give up (exit 1) after this long (default --for + 15m)')
    .option('--cluster <name>', 'the cluster of the phase')
    .option('-n, --namespace <namespace>', 'the namespace of the phase');
  clientOptions(gate).addOption(
    new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'),
  );
  gate.addHelpText(
    'after',
    '\nExamples:\n  phaselog gate staging/shop/api --for 10m\n  phaselog gate --plan site-prod --for 10m --wait --timeout 1h\n  phaselog gate staging/shop/api --for 10m --wait --timeout 30m   # a CI promotion step\n  phaselog gate prod/shop/api --for 10m --condition health=True --condition version=True:5m',
  );
  gate.action(
    (
      phase: string | undefined,
      f: ClientFlags & {
        for: string;
        status: string;
        plan?: string;
        condition?: string[];
        wait?: boolean;
        timeout?: string;
        cluster?: string;
        namespace?: string;
        output: OutputFormat;
      },
    ) =>
      client(hooks, f, async (ctx) => {
        const command = await load.gate();
        const conditions = (f.condition ?? []).map(command.parseConditionArg);
        return command.runGate(ctx, {
          ...(phase !== undefined ? { phase } : {}),
          for: f.for,
          status: f.status,
          wait: f.wait ?? false,
          output: f.output,
          conditions,
          ...pick(f, ['timeout', 'cluster', 'namespace', 'plan']),
        });
      }),
  );

  const plan = program
    .command('plan')
    .description(
      'phase plans: ordered lists of phases (phaselog.yaml plans:, or phaselog.dev/plan labels) and where each is',
    );
  const planList = plan.command('list').description('every plan with its status and the step it is at');
  outputOptions(clientOptions(planList));
  planList.action((f: OutputFlags & ClientFlags) =>
    client(hooks, f, async (ctx) => (await load.plan()).runPlanList(ctx, { output: f.output, headers: f.headers })),
  );
  const planStatus = plan
    .command('status')
    .description("the plan's status line, then its phases in order with their step numbers")
    .argument('<plan>', "the plan's name");
  clientOptions(planStatus)
    .addOption(
      new Option('-o, --output <format>', 'output format (summary: resource counts per phase)')
        .choices(['table', 'wide', 'json', 'yaml', 'summary'])
        .default('table'),
    )
    .option('--no-headers', 'leave out the header row of tables');
  planStatus.addHelpText(
    'after',
    '\nExamples:\n  phaselog plan status site-prod\n  phaselog plan status site-prod -o summary\n  phaselog plan status site-prod -o json',
  );
  planStatus.action(
    (
      name: string,
      f: Omit<OutputFlags, 'output'> & ClientFlags & { output: 'table' | 'wide' | 'json' | 'yaml' | 'summary' },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.plan()).runPlanStatus(ctx, { plan: name, output: f.output, headers: f.headers }),
      ),
  );
  const planHistory = plan
    .command('history')
    .description("the plan's status intervals: when it was at which step")
    .argument('<plan>', "the plan's name")
    .option('--from <time>', 'start of the window (default 7d ago)')
    .option('--to <time>', 'end of the window (default now)');
  outputOptions(clientOptions(planHistory), ['table', 'wide', 'json', 'yaml']);
  planHistory.addHelpText(
    'after',
    '\nExamples:\n  phaselog plan history site-prod --from 24h\n  phaselog plan history site-prod -o json',
  );
  planHistory.action((name: string, f: OutputFlags & ClientFlags & { from?: string; to?: string }) =>
    client(hooks, f, async (ctx) =>
      (await load.plan()).runPlanHistory(ctx, {
        plan: name,
        output: f.output,
        headers: f.headers,
        ...pick(f, ['from', 'to']),
      }),
    ),
  );

  const report = program
    .command('report')
    .description('an audit report over recorded history: availability, failures, time to recover, manifest changes')
    .requiredOption('--from <time>', 'start of the report window')
    .option('--to <time>', 'end of the report window (default now)')
    .addOption(
      new Option('--format <format>', 'report format (default: from --out, else json)').choices([
        'json',
        'csv',
        'markdown',
        'html',
      ]),
    )
    .option('--out <file>', 'write the report to this file (.json, .csv, .md, .html)')
    .option('--cluster <name>', 'only phases in this cluster (repeat for several)', collect)
    .option('-n, --namespace <namespace>', 'only phases in this namespace (repeat for several)', collect)
    .option('--phase <name>', 'only phases with this name (repeat for several)', collect);
  clientOptions(report);
  report.addHelpText(
    'after',
    '\nExamples:\n  phaselog report --from 30d --out audit.html\n  phaselog report --from 2026-11-01 --to 2026-11-08 --format csv --cluster prod',
  );
  report.action(
    (
      f: ClientFlags & {
        from: string;
        to?: string;
        format?: string;
        out?: string;
        cluster?: string[];
        namespace?: string[];
        phase?: string[];
      },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.report()).runReport(ctx, {
          from: f.from,
          clusters: f.cluster ?? [],
          namespaces: f.namespace ?? [],
          phases: f.phase ?? [],
          ...pick(f, ['to', 'format', 'out']),
        }),
      ),
  );

  const clusters = program
    .command('clusters')
    .description('clusters: observed, unobserved or retired, and their reachability');
  outputOptions(clientOptions(clusters));
  clusters.action((f: OutputFlags & ClientFlags) =>
    client(hooks, f, async (ctx) => (await load.clusters()).runClusters(ctx, { output: f.output, headers: f.headers })),
  );

  const notifications = program
    .command('notifications')
    .description(
      'notification deliveries, newest first: sent, held, suppressed or failed, with attempts and the last error',
    )
    .option('--route <name>', 'only this route')
    .addOption(
      new Option('--status <status>', 'only deliveries in this state (repeatable)').argParser(
        collectChoice(['pending', 'held', 'delivered', 'failed', 'suppressed']),
      ),
    )
    .option('--cluster <name>', 'only changes of this cluster')
    .option('-n, --namespace <namespace>', 'only changes of phases in this namespace')
    .option('--limit <n>', 'how many (1 to 100)', parseLimit, 50);
  outputOptions(clientOptions(notifications), ['table', 'wide', 'json', 'yaml']);
  notifications.addHelpText(
    'after',
    '\nExamples:\n  phaselog notifications --status failed\n  phaselog notifications --route ops -o wide',
  );
  notifications.action(
    (
      f: OutputFlags &
        ClientFlags & { route?: string; status?: string[]; cluster?: string; namespace?: string; limit: number },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.notifications()).runNotifications(ctx, {
          statuses: f.status ?? [],
          limit: f.limit,
          output: f.output,
          headers: f.headers,
          ...pick(f, ['route', 'cluster', 'namespace']),
        }),
      ),
  );

  const token = program
    .command('token')
    .description(
      "API tokens; without PHASELOG_TOKEN these work on this machine's phaselog database (how the first admin token is made)",
    );
  const create = token
    .command('create')
    .description('create a token and print its secret (shown only once)')
    .argument('<name>', 'a name for the token')
    .option('--admin', 'admin scope (same as --scope admin)')
    .addOption(
      new Option('--scope <scope>', 'read (default) or admin; repeatable').argParser(collectChoice(['read', 'admin'])),
    )
    .option('--cluster <name>', 'restrict the token to this cluster (repeatable)', collect)
    .option('-n, --namespace <namespace>', 'restrict the token to this namespace (repeatable)', collect);
  outputOptions(clientOptions(create), ['table', 'json', 'yaml']);
  create.action(
    (
      name: string,
      f: OutputFlags & ClientFlags & { admin?: boolean; scope?: string[]; cluster?: string[]; namespace?: string[] },
    ) =>
      client(hooks, f, async (ctx) =>
        (await load.token()).runToken(ctx, {
          action: 'create',
          name,
          scopes: [...(f.scope ?? []), ...(f.admin ? ['admin'] : [])],
          clusters: f.cluster ?? [],
          namespaces: f.namespace ?? [],
          output: f.output,
          headers: f.headers,
        }),
      ),
  );
  const list = token.command('list').description('every token, revoked ones included (secrets are never shown)');
  outputOptions(clientOptions(list));
  list.action((f: OutputFlags & ClientFlags) =>
    client(hooks, f, async (ctx) =>
      (await load.token()).runToken(ctx, {
        action: 'list',
        scopes: [],
        clusters: [],
        namespaces: [],
        output: f.output,
        headers: f.headers,
      }),
    ),
  );
  const revoke = token
    .command('revoke')
    .description('revoke a token at once')
    .argument('<name>', 'the token to revoke');
  clientOptions(revoke);
  revoke.action((name: string, f: ClientFlags) =>
    client(hooks, f, async (ctx) =>
      (await load.token()).runToken(ctx, {
        action: 'revoke',
        name,
        scopes: [],
        clusters: [],
        namespaces: [],
        output: 'table',
        headers: true,
      }),
    ),
  );

  const version = program
    .command('version')
    .description("this CLI's version and the server's")
    .option('--client', 'only the CLI, without asking the server');
  clientOptions(version).addOption(
    new Option('-o, --output <format>', 'output format').choices(['table', 'json', 'yaml']).default('table'),
  );
  version.action((f: ClientFlags & { client?: boolean; output: OutputFormat }) =>
    client(hooks, f, async (ctx) =>
      (await load.version()).runVersion(ctx, { clientOnly: f.client ?? false, output: f.output }),
    ),
  );

  program
    .command('completion')
    .description('print a shell completion script: source <(phaselog completion bash)')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(async (shell: 'bash' | 'zsh' | 'fish') =>
      hooks.write('out', (await load.completion()).completionScript(program, shell)),
    );

  return program;
}

/** The defined fields of `source` among `keys`, for options objects under exactOptionalPropertyTypes. */
function pick<T extends object, K extends keyof T>(
  source: T,
  keys: readonly K[],
): { [P in K]?: Exclude<T[P], undefined> } {
  const out: { [P in K]?: Exclude<T[P], undefined> } = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key] as Exclude<T[K], undefined>;
  return out;
}

/**
 * Run the tree on `argv` (without node and the script). Usage errors become one line on stderr with
 * where to read more, and exit code 2; a CliError from a command keeps its own exit code.
 */
export async function runProgram(
  program: Command,
  argv: string[],
  hooks: Pick<ProgramHooks, 'write'>,
): Promise<number> {
  // No command runs `start` (with its flags: `phaselog --port 4001`); a mistyped command stays an error.
  const first = argv[0];
  const bare = first === undefined || (first.startsWith('-') && !['-h', '--help', '-v', '--version'].includes(first));
  try {
    await program.parseAsync(bare ? ['start', ...argv] : argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.code === 'commander.help'
      )
        return 0;
      const command = commandPath(program, argv);
      const message = error.message
        .replace(/^error: /, '')
        .replace(/\.?\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)')
        .trim()
        .replace(/\.$/, '');
      hooks.write('err', `phaselog: ${message}; see '${command} --help'\n`);
      return EXIT.usage;
    }
    if (error instanceof CliError) {
      hooks.write('err', `phaselog: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

/** `phaselog status` for `status -x`: the deepest command named in argv. */
function commandPath(program: Command, argv: string[]): string {
  const names = ['phaselog'];
  let current = program;
  for (const arg of argv) {
    const next = current.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!next) break;
    names.push(next.name());
    current = next;
  }
  return names.join(' ');
}
