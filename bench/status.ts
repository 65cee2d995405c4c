/**
 * Status engine throughput: kstatus evaluations per second over a realistic mix of objects, and the
 * cost of computing statuses relative to `JSON.parse` of the same objects in the same run.
 *
 *   node --import tsx bench/status.ts [--count 100000] [--rounds 5]
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { computeStatus } from '../src/status/index.ts';
import type { ResourceStatus } from '../src/status/index.ts';

/** Options of {@link run}. */
export interface StatusBenchOptions {
  /** How many objects to generate. @default 100000 */
  count?: number;
  /** Timed rounds; the median is reported. @default 5 */
  rounds?: number;
  /** Print the table. @default true when run from the command line */
  print?: boolean;
}

type Json = Record<string, unknown>;

const fixtures = JSON.parse(
  readFileSync(fileURLToPath(new URL('../test/fixtures/kstatus/objects.json', import.meta.url)), 'utf8'),
) as Record<string, Json>;

/** Share of each fixture kind in the mix, roughly what a busy application namespace holds. */
const MIX: readonly [string, number][] = [
  ['pod', 28],
  ['replicaset', 14],
  ['deployment', 12],
  ['service', 10],
  ['configmap', 10],
  ['secret', 7],
  ['kustomization', 5],
  ['statefulset', 3],
  ['job', 3],
  ['pvc', 3],
  ['daemonset', 2],
  ['pdb', 1],
  ['cronjob', 1],
  ['crd', 1],
];

/** A managedFields entry like the API server attaches to every object (most of a real object's bytes). */
function managedFields(i: number): Json[] {
  const fields: Json = {};
  for (let f = 0; f < 12; f++)
    fields[`f:field${f}`] = { '.': {}, [`f:sub${f}`]: {}, [`f:other${f}`]: { 'f:leaf': {} } };
  return [
    {
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:metadata': { 'f:labels': fields } },
      manager: 'kustomize-controller',
      operation: 'Apply',
      time: '2026-02-28T09:15:02Z',
    },
    {
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': fields },
      manager: 'kube-controller-manager',
      operation: 'Update',
      subresource: 'status',
      time: `2026-02-28T09:${String(i % 60).padStart(2, '0')}:10Z`,
    },
  ];
}

/** Roughly one object in ten is mid-rollout, so both Current and InProgress paths are exercised. */
function vary(base: Json, i: number): Json {
  const object = structuredClone(base);
  const metadata = object['metadata'] as Json;
  metadata['name'] = `${String(metadata['name'])}-${i}`;
  metadata['uid'] = `uid-${i}`;
  metadata['managedFields'] = managedFields(i);
  const status = object['status'];
  if (i % 10 === 3 && typeof status === 'object' && status !== null) {
    const s = status as Json;
    if ('readyReplicas' in s) s['readyReplicas'] = 0;
    if ('numberReady' in s) s['numberReady'] = 0;
    if (s['phase'] === 'Running') s['conditions'] = [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }];
  }
  return object;
}

function buildTexts(count: number): string[] {
  const weights = MIX.reduce((sum, [, w]) => sum + w, 0);
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    let slot = (i * 7919) % weights;
    let kind = MIX[0]?.[0] ?? 'pod';
    for (const [name, weight] of MIX) {
      if (slot < weight) {
        kind = name;
        break;
      }
      slot -= weight;
    }
    texts.push(JSON.stringify(vary(fixtures[kind] ?? {}, i)));
  }
  return texts;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function timeMs(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Runs the benchmark and returns its figures (also printed as a table unless `print` is false). */
export async function run(options: StatusBenchOptions = {}): Promise<Record<string, number | string>> {
  const count = options.count ?? 100_000;
  const rounds = options.rounds ?? 5;
  const texts = buildTexts(count);
  const bytes = texts.reduce((sum, t) => sum + t.length, 0);
  const now = new Date('2026-03-01T12:00:00Z');

  let objects: unknown[] = [];
  const parseTimes: number[] = [];
  const statusTimes: number[] = [];
  const counts: Partial<Record<ResourceStatus, number>> = {};
  for (let r = 0; r < rounds + 1; r++) {
    const parseMs = timeMs(() => {
      objects = texts.map((t) => JSON.parse(t) as unknown);
    });
    let sink = 0;
    const statusMs = timeMs(() => {
      for (const object of objects) {
        if (computeStatus(object, { now }).status === 'Current') sink++;
      }
    });
    // Round 0 warms up the JIT and is not counted.
    if (r > 0) {
      parseTimes.push(parseMs);
      statusTimes.push(statusMs);
    }
    if (sink < 0) console.log(sink);
  }
  for (const object of objects) {
    const status = computeStatus(object, { now }).status;
    counts[status] = (counts[status] ?? 0) + 1;
  }

  const parseMs = median(parseTimes);
  const statusMs = median(statusTimes);
  const figures: Record<string, number | string> = {
    objects: count,
    'avg object bytes': Math.round(bytes / count),
    'JSON.parse ms': Number(parseMs.toFixed(1)),
    'JSON.parse objects/s': Math.round((count / parseMs) * 1000),
    'computeStatus ms': Number(statusMs.toFixed(1)),
    'computeStatus evaluations/s': Math.round((count / statusMs) * 1000),
    'status cost / parse cost %': Number(((statusMs / parseMs) * 100).toFixed(2)),
    'status mix': Object.entries(counts)
      .map(([s, n]) => `${s} ${n}`)
      .join(', '),
  };
  if (options.print ?? true) {
    console.log(`status engine, median of ${rounds} rounds (node ${process.version})`);
    console.table(Object.entries(figures).map(([figure, value]) => ({ figure, value })));
  }
  return figures;
}

function readFlag(name: string): number | undefined {
  const index = process.argv.indexOf(`--${name}`);
  const value = index === -1 ? undefined : Number(process.argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  await run({ count: readFlag('count'), rounds: readFlag('rounds') });
}
