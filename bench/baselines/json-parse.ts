/**
 * Baseline: `JSON.parse` of typical ~4 KB Kubernetes objects, one string per object as a watch or a
 * per-object GET delivers them. Every phaselog read pays at least this, so figures such as status
 * evaluations/s or resources read/s are best read as a multiple of it.
 *
 *   node --import tsx bench/baselines/json-parse.ts [--count 20000] [--rounds 5]
 */
import { buildTypicalObjects } from '../lib/k8s-objects.ts';
import { isMain, printFigures, readNumberFlag } from '../lib/cli.ts';
import { median, perSecond, round, timeSync } from '../lib/stats.ts';
import type { Figures } from '../lib/types.ts';

/** Options of {@link run}. */
export interface JsonParseBaselineOptions {
  /** Objects per round. @default 20000 */
  count?: number;
  /** Timed rounds after one warm-up round; the median is reported. @default 5 */
  rounds?: number;
}

/** Parses the same strings `rounds` times and returns objects/s and MB/s of the median round. */
export async function run(options: JsonParseBaselineOptions = {}): Promise<Figures> {
  const count = options.count ?? 20_000;
  const rounds = options.rounds ?? 5;
  const texts = buildTypicalObjects(count).map((o) => JSON.stringify(o));
  const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
  const times: number[] = [];
  let kept = 0;
  for (let r = 0; r <= rounds; r++) {
    const ms = timeSync(() => {
      for (const text of texts) if ((JSON.parse(text) as { kind?: string }).kind !== undefined) kept++;
    });
    if (r > 0) times.push(ms);
  }
  const ms = median(times);
  return {
    objects: count,
    'avg object bytes': Math.round(bytes / count),
    'median round ms': round(ms),
    'objects/s': perSecond(count, ms),
    'MB/s': round(bytes / 1e6 / (ms / 1000)),
    'µs per object': round((ms * 1000) / count, 2),
    'parsed (sanity)': kept,
  };
}

if (isMain(import.meta.url)) {
  printFigures('JSON.parse of typical Kubernetes objects', await run({ count: readNumberFlag('count'), rounds: readNumberFlag('rounds') }));
}
