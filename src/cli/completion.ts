/**
 * Shell completion scripts generated from the command tree itself, so they can never list a flag a
 * command does not take. Commander has no completion of its own, and the completion libraries
 * (tabtab, omelette) need a hook in every invocation instead of a script; this walks the tree once.
 * Phase, plan and cluster names complete from the running server (`status -o name`, `plan list -o
 * name`, `clusters -o name`).
 */
import type { Command, Option } from 'commander';

interface Node {
  /** `status`, `token create`; empty for the root. */
  path: string;
  command: Command;
}

function walk(command: Command, prefix = ''): Node[] {
  const nodes: Node[] = [{ path: prefix, command }];
  for (const sub of command.commands) nodes.push(...walk(sub, prefix ? `${prefix} ${sub.name()}` : sub.name()));
  return nodes;
}

/** Every option of a command, help included. */
function optionsOf(command: Command): Option[] {
  const help = command.createHelp();
  return help.visibleOptions(command);
}

function flagsOf(option: Option): string[] {
  return [option.short, option.long].filter((f): f is string => Boolean(f));
}

const takesValue = (option: Option) => option.required || option.optional;

/** What completes a flag's value: its choices, or names read from the server. */
function valueWords(option: Option): string | undefined {
  if (option.argChoices) return option.argChoices.join(' ');
  if (option.long === '--cluster') return '$(phaselog clusters -o name 2>/dev/null)';
  if (option.long === '--plan') return '$(phaselog plan list -o name 2>/dev/null)';
  return undefined;
}

/** The server command listing the names a command's first argument takes: phases or plans. */
const NAME_SOURCES: Readonly<Record<string, string>> = {
  phase: 'phaselog status -o name',
  plan: 'phaselog plan list -o name',
};
const namesOf = (command: Command): string | undefined => {
  const name = command.registeredArguments[0]?.name();
  return name !== undefined && Object.hasOwn(NAME_SOURCES, name) ? NAME_SOURCES[name] : undefined;
};

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

function bash(program: Command): string {
  const nodes = walk(program).filter((n) => n.command.name() !== 'emulator' || n.path === 'emulator');
  const paths = nodes.filter((n) => n.path).map((n) => quote(n.path));
  const valueCases: string[] = [];
  const wordCases: string[] = [];
  for (const { path, command } of nodes) {
    for (const option of optionsOf(command)) {
      if (!takesValue(option)) continue;
      const words = valueWords(option);
      const pattern = flagsOf(option)
        .map((f) => quote(`${path}:${f}`))
        .join('|');
      valueCases.push(
        `    ${pattern}) ${words ? `COMPREPLY=($(compgen -W "${words}" -- "$cur"))` : 'COMPREPLY=()'}; return ;;`,
      );
    }
    // Flags once a dash is typed, else subcommands and argument values (kubectl's manners).
    const flags = optionsOf(command).flatMap(flagsOf).join(' ');
    const argument = command.registeredArguments[0];
    const values = [
      command.commands.map((c) => c.name()).join(' '),
      namesOf(command) !== undefined ? `$(${namesOf(command)} 2>/dev/null)` : (argument?.argChoices?.join(' ') ?? ''),
    ]
      .filter(Boolean)
      .join(' ');
    wordCases.push(
      `    ${quote(path)}) if [[ "$cur" == -* ]]; then words=${quote(flags)}; else words="${values}"; fi ;;`,
    );
  }
  return `# phaselog completion for bash: source <(phaselog completion bash)
_phaselog() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local path="" i w words
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    case "\${path:+$path }$w" in
      ${paths.join('|')}) path="\${path:+$path }$w" ;;
    esac
  done
  [[ "$path" == emulator* ]] && return
  case "$path:$prev" in
${valueCases.join('\n')}
  esac
  case "$path" in
${wordCases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _phaselog phaselog
`;
}

function zsh(program: Command): string {
  // zsh runs bash completion functions through bashcompinit: one script to keep right, not two.
  return `#compdef phaselog
# phaselog completion for zsh: source <(phaselog completion zsh)
autoload -U +X bashcompinit && bashcompinit
${bash(program).split('\n').slice(1).join('\n')}`;
}

function fish(program: Command): string {
  const lines = ['# phaselog completion for fish: phaselog completion fish | source', 'complete -c phaselog -f'];
  const top = program.commands.map((c) => c.name());
  const allPaths = walk(program).map((n) => (n.path ? n.path.split(' ') : []));
  for (const { path, command } of walk(program)) {
    const parts = path ? path.split(' ') : [];
    const subs = command.commands.map((c) => c.name());
    // Commands of the same name elsewhere in the tree (`status`, `plan status`): not under their parents.
    const elsewhere = [
      ...new Set(
        allPaths
          .filter((o) => o.length > 0 && o.at(-1) === parts.at(-1) && o.join(' ') !== path)
          .map((o) => o[0] as string)
          .filter((first) => !parts.includes(first)),
      ),
    ];
    // The command line names exactly this path: its parts, and none of its subcommands yet.
    const here =
      parts.length === 0
        ? `not __fish_seen_subcommand_from ${top.join(' ')}`
        : [
            ...parts.map((p) => `__fish_seen_subcommand_from ${p}`),
            ...(elsewhere.length ? [`not __fish_seen_subcommand_from ${elsewhere.join(' ')}`] : []),
            ...(subs.length ? [`not __fish_seen_subcommand_from ${subs.join(' ')}`] : []),
          ].join('; and ');
    for (const sub of command.commands)
      lines.push(`complete -c phaselog -n ${quote(here)} -a ${quote(sub.name())} -d ${quote(sub.description())}`);
    if (path === 'emulator') continue;
    for (const option of optionsOf(command)) {
      const flags = [option.short ? `-s ${option.short.slice(1)}` : '', option.long ? `-l ${option.long.slice(2)}` : '']
        .filter(Boolean)
        .join(' ');
      const words = valueWords(option);
      const value = takesValue(option)
        ? words
          ? ` -xa ${words.startsWith('$(') ? `"(${words.slice(2, -1)})"` : quote(words)}`
          : ' -r'
        : '';
      lines.push(`complete -c phaselog -n ${quote(here)} ${flags}${value} -d ${quote(option.description)}`);
    }
    const names = namesOf(command);
    if (names !== undefined) lines.push(`complete -c phaselog -n ${quote(here)} -a "(${names} 2>/dev/null)"`);
    const choices = command.registeredArguments[0]?.argChoices;
    if (choices) lines.push(`complete -c phaselog -n ${quote(here)} -a ${quote(choices.join(' '))}`);
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: 'bash' | 'zsh' | 'fish'): string {
  return shell === 'bash' ? bash(program) : shell === 'zsh' ? zsh(program) : fish(program);
}
