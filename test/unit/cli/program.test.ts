/**
 * The command tree: every command takes only its own flags (a flag that would do nothing is an error
 * with a hint, exit 2), `phaselog` alone starts the server, and the completion scripts complete what
 * the tree defines, run by a real bash.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { buildProgram, runProgram } from '../../../src/cli/program.ts';
import type { ProgramHooks } from '../../../src/cli/program.ts';
import { VERSION } from '../../../src/runtime/paths.ts';

interface Ran {
  code: number;
  out: string;
  err: string;
  served: { role: string; overrides: Record<string, string | undefined> }[];
  clientCalls: { url?: string; token?: string }[];
}

async function run(argv: string[]): Promise<Ran> {
  const ran: Ran = { code: -1, out: '', err: '', served: [], clientCalls: [] };
  const hooks: ProgramHooks = {
    // The command's own work needs a server (the e2e tests run it); here only what reaches it counts.
    client: async (flags) => void ran.clientCalls.push(flags),
    serve: async (role, overrides) => void ran.served.push({ role, overrides }),
    migrate: async () => {},
    emulator: async () => {},
    write: (stream, text) => void (stream === 'out' ? (ran.out += text) : (ran.err += text)),
  };
  ran.code = await runProgram(buildProgram(hooks), argv, hooks);
  return ran;
}

describe('phaselog command line', () => {
  it.each([
    [['status', '--out', 'r.docx'], /unknown option '--out'( \(did you mean --\w+\?\))?; see 'phaselog status --help'/],
    [['status', '--from', '1h'], /unknown option '--from'; see 'phaselog status --help'/],
    [['status', '--namspace', 'shop'], /unknown option '--namspace' \(did you mean --namespace\?\)/],
    [['history', 'api', '--watch'], /unknown option '--watch'; see 'phaselog history --help'/],
    [['report', '--from', '1d', '-o', 'json'], /unknown option '-o'; see 'phaselog report --help'/],
    [['clusters', '-n', 'shop'], /unknown option '-n'; see 'phaselog clusters --help'/],
    [
      ['manifest', 'api', '-o', 'name'],
      /argument 'name' is invalid\. Allowed choices are table, json, yaml; see 'phaselog manifest --help'/,
    ],
    [['status', '-o', 'xml'], /argument 'xml' is invalid/],
    [['status', '-n', 'shop', '-A'], /'-n, --namespace <namespace>' cannot be used with option '-A, --all-namespaces'/],
    [['status', 'a', 'b'], /too many arguments for 'status'/],
    [['gate', 'api'], /required option '--for <duration>' not specified; see 'phaselog gate --help'/],
    [['history'], /missing required argument 'phase'/],
    [['plan', 'status'], /missing required argument 'plan'; see 'phaselog plan status --help'/],
    [
      ['plan', 'status', 'site', '-o', 'name'],
      /argument 'name' is invalid\. Allowed choices are table, wide, json, yaml, summary/,
    ],
    [
      ['plan', 'history', 'site', '-o', 'summary'],
      /argument 'summary' is invalid\. Allowed choices are table, wide, json, yaml/,
    ],
    [['plan', 'list', '--from', '1h'], /unknown option '--from'; see 'phaselog plan list --help'/],
    [['gate', '--plan', 'site'], /required option '--for <duration>' not specified/],
    [['statsu'], /unknown command 'statsu' \(did you mean status\?\); see 'phaselog --help'/],
    [['token', 'create', 'x', '--scope', 'root'], /argument 'root' is invalid\. Allowed choices are read, admin/],
    [['start', '--watch'], /unknown option '--watch'; see 'phaselog start --help'/],
    [['completion', 'powershell'], /Allowed choices are bash, zsh, fish/],
    [
      ['manifest', 'api', '--diff', '--context', '-1'],
      /option '--context <lines>' argument '-1' is invalid\. Lines of context are a whole number from 0 to 1000/,
    ],
    [['manifest', 'api', '--diff', '--context', '5000'], /Lines of context are a whole number from 0 to 1000/],
  ])('refuses %j with one line and exit code 2', async (argv, message) => {
    const ran = await run(argv);
    expect(ran.code).toBe(2);
    expect(ran.err).toMatch(message);
    expect(ran.err.trim().split('\n')).toHaveLength(1);
    expect(ran.clientCalls).toEqual([]);
    expect(ran.served).toEqual([]);
  });

  it('refuses an unknown status by name, in any case it accepts', async () => {
    const bad = await run(['status', '--status', 'Broken']);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe(
      'phaselog: unknown status "Broken" (use Current, InProgress, Failed, Terminating, NotFound, Unknown)\n',
    );
    expect((await run(['status', '--status', 'failed,inprogress', '--status', 'Unknown'])).code).toBe(0);
  });

  it('starts the server when no command is given, with the flags of start', async () => {
    expect((await run([])).served).toEqual([
      { role: 'start', overrides: { 'server.host': undefined, 'server.port': undefined } },
    ]);
    expect((await run(['--port', '4001'])).served).toEqual([
      { role: 'start', overrides: { 'server.host': undefined, 'server.port': '4001' } },
    ]);
    expect((await run(['api', '--host', '0.0.0.0'])).served).toEqual([
      { role: 'api', overrides: { 'server.host': '0.0.0.0', 'server.port': undefined } },
    ]);
  });

  it('passes --url and --token to the client, and takes them from the environment too', async () => {
    expect((await run(['clusters', '--url', 'http://x:1/graphql', '--token', 'plg_t'])).clientCalls).toEqual([
      { url: 'http://x:1/graphql', token: 'plg_t' },
    ]);
  });

  it('prints help for every command with its own flags and examples', async () => {
    const top = await run(['--help']);
    expect(top.code).toBe(0);
    for (const command of [
      'start',
      'status',
      'history',
      'manifest',
      'gate',
      'plan',
      'report',
      'clusters',
      'token',
      'version',
      'completion',
      'emulator',
    ])
      expect(top.out).toMatch(new RegExp(`\\n  ${command}\\b`));
    expect(top.out).toMatch(/Exit codes: 0 ok, 1 gate not passed/);
    const status = await run(['status', '--help']);
    expect(status.out).toMatch(/-n, --namespace <namespace>/);
    expect(status.out.replace(/\s+/g, ' ')).toContain(
      '-o, --output <format> output format (choices: "table", "wide", "json", "yaml", "name", "summary", "all", "detail", "rsync", default: "table")',
    );
    expect(status.out).toMatch(/Examples:\n {2}phaselog status /);
    const gate = await run(['gate', '--help']);
    expect(gate.out).toMatch(/--wait/);
    expect(gate.out).toMatch(/--plan <name>/);
    const planStatus = await run(['plan', 'status', '--help']);
    expect(planStatus.out).toMatch(/Examples:\n {2}phaselog plan status site-prod\n/);
    expect(gate.out).not.toMatch(/--namespace <namespace>\s+only phases/);
  });

  it('prints its version', async () => {
    expect((await run(['--version'])).out).toBe(`${VERSION}\n`);
    expect((await run(['-v'])).out).toBe(`${VERSION}\n`);
  });
});

describe('phaselog completion', () => {
  /** What bash completes for the words typed so far (the last one being completed). */
  function complete(script: string, words: string[]): string[] {
    const line = words.map((w) => `'${w}'`).join(' ');
    const program = `${script}\nCOMP_WORDS=(${line}); COMP_CWORD=${words.length - 1}; _phaselog; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const result = spawnSync('bash', ['--norc', '-c', program], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    expect(result.stderr).toBe('');
    return result.stdout.split('\n').filter(Boolean);
  }

  it('completes commands, subcommands, flags and flag values in bash', async () => {
    const script = (await run(['completion', 'bash'])).out;
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
    expect(complete(script, ['phaselog', 'st'])).toEqual(['start', 'status']);
    expect(complete(script, ['phaselog', 'token', 'c'])).toEqual(['create']);
    expect(complete(script, ['phaselog', 'status', '--no'])).toEqual(['--no-headers']);
    expect(complete(script, ['phaselog', 'status', '-o', ''])).toEqual([
      'table',
      'wide',
      'json',
      'yaml',
      'name',
      'summary',
      'all',
      'detail',
      'rsync',
    ]);
    expect(complete(script, ['phaselog', 'gate', 'api', '--st'])).toEqual(['--status']);
    expect(complete(script, ['phaselog', 'plan', ''])).toEqual(['list', 'status', 'history']);
    expect(complete(script, ['phaselog', 'plan', 'status', 'site', '-o', ''])).toEqual([
      'table',
      'wide',
      'json',
      'yaml',
      'summary',
    ]);
    expect(complete(script, ['phaselog', 'gate', '--pl'])).toEqual(['--plan']);
    // report takes no -o: the script cannot offer it.
    expect(complete(script, ['phaselog', 'report', '--ou'])).toEqual(['--out']);
    expect(complete(script, ['phaselog', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
  });

  it('gives zsh the same completion through bashcompinit, and fish one line per command and flag', async () => {
    const zsh = (await run(['completion', 'zsh'])).out;
    expect(zsh).toMatch(/^#compdef phaselog\n/);
    expect(zsh).toContain('bashcompinit');
    expect(zsh).toContain('complete -F _phaselog phaselog');
    const fish = (await run(['completion', 'fish'])).out;
    expect(fish).toContain("complete -c phaselog -n 'not __fish_seen_subcommand_from");
    expect(fish).toMatch(
      /-n '__fish_seen_subcommand_from status; and not __fish_seen_subcommand_from plan' -s o -l output -xa 'table wide json yaml name summary all detail rsync'/,
    );
    expect(fish).toMatch(
      /-n '__fish_seen_subcommand_from plan; and __fish_seen_subcommand_from status' -s o -l output -xa 'table wide json yaml summary'/,
    );
    expect(fish).toMatch(
      /-n '__fish_seen_subcommand_from token; and not __fish_seen_subcommand_from create list revoke' -a 'create'/,
    );
    expect(fish).toContain('-a "(phaselog status -o name 2>/dev/null)"');
    expect(fish).toContain(
      `-n '__fish_seen_subcommand_from plan; and __fish_seen_subcommand_from status' -a "(phaselog plan list -o name 2>/dev/null)"`,
    );
  });
});
