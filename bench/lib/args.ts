/**
 * Command-line flags of `npm run bench`:
 *
 *   --only status,read-path     run these entries (plus the baselines they compare with)
 *   --size small|default        sizes from the registry (default: default)
 *   --<id>.<option> <value>     override one run() option, e.g. --read-path.clusters 4
 *   --no-baselines              with --only: do not add the baselines automatically
 *   --markdown                  print the result tables as Markdown (for BENCHMARKS.md)
 *   --out <file>                where to write the JSON results (default bench/results/latest.json)
 *   --list                      list the registry and whether each module exists, run nothing
 */
import type { BenchSize } from './types.ts';

/** Parsed flags. */
export interface HarnessArgs {
  only: string[] | undefined;
  size: BenchSize;
  overrides: Record<string, Record<string, unknown>>;
  baselines: boolean;
  markdown: boolean;
  out: string | undefined;
  list: boolean;
}

/** A flag problem worth exiting with status 2 for. */
export class UsageError extends Error {
  override name = 'UsageError';
}

function parseValue(raw: string): unknown {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  const n = Number(raw);
  return raw.trim() !== '' && Number.isFinite(n) ? n : raw;
}

/** Parses `argv` (without node and the script); throws {@link UsageError} on unknown or malformed flags. */
export function parseHarnessArgs(argv: readonly string[]): HarnessArgs {
  const args: HarnessArgs = {
    only: undefined,
    size: 'default',
    overrides: {},
    baselines: true,
    markdown: false,
    out: undefined,
    list: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    const [name, inline] = flag.includes('=')
      ? [flag.slice(0, flag.indexOf('=')), flag.slice(flag.indexOf('=') + 1)]
      : [flag, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`${name} needs a value`);
      return v;
    };
    if (name === '--only')
      args.only = value()
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (name === '--size') {
      const size = value();
      if (size !== 'small' && size !== 'default') throw new UsageError(`--size is small or default, not ${size}`);
      args.size = size;
    } else if (name === '--no-baselines') args.baselines = false;
    else if (name === '--markdown') args.markdown = true;
    else if (name === '--list') args.list = true;
    else if (name === '--out') args.out = value();
    else if (/^--[\w-]+\.[\w-]+$/.test(name)) {
      const [id = '', option = ''] = name.slice(2).split('.');
      const camel = option.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
      (args.overrides[id] ??= {})[camel] = parseValue(value());
    } else throw new UsageError(`unknown flag ${flag}`);
  }
  return args;
}
