/**
 * What a second V8 heap snapshot holds beyond a first, by kind of object: the bytes and counts
 * each constructor (or V8's internal kind: strings, compiled code, property arrays) added, divided
 * by `per` (e.g. the clusters the second process held more). For attributing the figures of
 * bench/cluster-footprint.ts (`--heap-snapshots <dir>`):
 *
 *   node --import tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [--per 90] [--top 30]
 */
import { readFileSync } from 'node:fs';
import { isMain, readNumberFlag } from './lib/cli.ts';

interface HeapSnapshotFile {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Bytes and count of one kind of object. */
export interface KindTotal {
  bytes: number;
  count: number;
}

/** Sums the self size of a snapshot's nodes by kind (constructor name, or V8's kind for internals). */
export function totalsByKind(file: string): Map<string, KindTotal> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshotFile;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const totals = new Map<string, KindTotal>();
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt] ?? 0] ?? '?';
    const name = snapshot.strings[snapshot.nodes[i + nameAt] ?? 0] ?? '';
    const kind =
      type === 'object' || type === 'native' || type === 'synthetic'
        ? `${type} ${name.slice(0, 60)}`
        : type === 'array' || type === 'hidden'
          ? `${type} ${name.slice(0, 40)}`
          : `(${type})`;
    const total = totals.get(kind) ?? { bytes: 0, count: 0 };
    total.bytes += snapshot.nodes[i + sizeAt] ?? 0;
    total.count += 1;
    totals.set(kind, total);
  }
  return totals;
}

/** The kinds that grew most from `before` to `after`, divided by `per`. */
export function diffTotals(
  before: Map<string, KindTotal>,
  after: Map<string, KindTotal>,
  per = 1,
): { kind: string; kb: number; count: number }[] {
  return [...after]
    .map(([kind, total]) => ({
      kind,
      kb: (total.bytes - (before.get(kind)?.bytes ?? 0)) / 1024 / per,
      count: (total.count - (before.get(kind)?.count ?? 0)) / per,
    }))
    .sort((a, b) => b.kb - a.kb);
}

if (isMain(import.meta.url)) {
  const [before, after] = process.argv.slice(2).filter((a) => a.endsWith('.heapsnapshot'));
  if (before === undefined || after === undefined)
    throw new Error('usage: heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [--per n] [--top n]');
  const per = readNumberFlag('per') ?? 1;
  const rows = diffTotals(totalsByKind(before), totalsByKind(after), per);
  console.log(`total KB${per === 1 ? '' : ` per ${per}`}: ${rows.reduce((sum, r) => sum + r.kb, 0).toFixed(1)}`);
  for (const row of rows.slice(0, readNumberFlag('top') ?? 30))
    console.log(`${row.kb.toFixed(2).padStart(9)} KB ${row.count.toFixed(1).padStart(8)} objects  ${row.kind}`);
}
