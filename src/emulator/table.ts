/**
 * Server-side printing: `meta.k8s.io/v1` Table answers for clients that ask for them (kubectl
 * get does), with the columns kube-apiserver prints for the common kinds, a CRD's
 * `additionalPrinterColumns`, or Name + Age for everything else.
 */
import type { ResourceType } from './catalog.ts';
import { readMeta } from './object-store.ts';
import type { KubeObject } from './types.ts';

/** Content type of Table answers. */
export const TABLE_CONTENT_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** Whether the Accept header asks for a Table (kubectl get's default). */
export function wantsTable(accept: string | undefined): boolean {
  return (
    accept !== undefined &&
    accept.split(',').some((p) => p.replace(/\s/g, '').includes('as=Table') && p.includes('g=meta.k8s.io'))
  );
}

type Cell = string | number | boolean;

interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  priority?: number;
  cell(obj: KubeObject): Cell;
}

/** How long ago, in kubectl's short form (`45s`, `3m20s`, `5h`, `2d3h`). */
export function formatAge(createdIso: unknown, nowMs = Date.now()): string {
  const t = typeof createdIso === 'string' ? Date.parse(createdIso) : Number.NaN;
  if (Number.isNaN(t)) return '<unknown>';
  const seconds = Math.floor((nowMs - t) / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  const days = Math.floor(hours / 24) % 365;
  if (hours < 24 * 365 * 8) return days === 0 ? `${years}y` : `${years}y${days}d`;
  return `${years}y`;
}

function at(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function num(obj: KubeObject, path: string): number {
  const v = at(obj, path);
  return typeof v === 'number' ? v : 0;
}

function count(obj: KubeObject, path: string): number {
  const v = at(obj, path);
  return typeof v === 'object' && v !== null ? Object.keys(v).length : 0;
}

const NAME: Column = { name: 'Name', type: 'string', format: 'name', cell: (o) => String(readMeta(o)['name'] ?? '') };
const AGE: Column = { name: 'Age', type: 'string', cell: (o) => formatAge(readMeta(o)['creationTimestamp']) };

function col(name: string, type: Column['type'], cell: Column['cell'], priority = 0): Column {
  return { name, type, priority, cell };
}

function podStatusText(o: KubeObject): string {
  if (readMeta(o)['deletionTimestamp'] !== undefined) return 'Terminating';
  const statuses = at(o, 'status.containerStatuses');
  if (Array.isArray(statuses)) {
    for (const cs of statuses as Record<string, unknown>[]) {
      const waiting = at(cs, 'state.waiting.reason');
      if (typeof waiting === 'string' && waiting !== '') return waiting;
      const terminated = at(cs, 'state.terminated.reason');
      if (typeof terminated === 'string' && terminated !== '') return terminated;
    }
  }
  const reason = at(o, 'status.reason');
  return typeof reason === 'string' && reason !== '' ? reason : String(at(o, 'status.phase') ?? 'Pending');
}

function podContainers(o: KubeObject): Record<string, unknown>[] {
  const cs = at(o, 'status.containerStatuses');
  return Array.isArray(cs) ? (cs as Record<string, unknown>[]) : [];
}

const BUILTIN_COLUMNS: Record<string, Column[]> = {
  '/Pod': [
    col(
      'Ready',
      'string',
      (o) =>
        `${podContainers(o).filter((c) => c['ready'] === true).length}/${Array.isArray(at(o, 'spec.containers')) ? (at(o, 'spec.containers') as unknown[]).length : 0}`,
    ),
    col('Status', 'string', podStatusText),
    col('Restarts', 'string', (o) =>
      String(podContainers(o).reduce((n, c) => n + (typeof c['restartCount'] === 'number' ? c['restartCount'] : 0), 0)),
    ),
    col('IP', 'string', (o) => String(at(o, 'status.podIP') ?? '<none>'), 1),
    col('Node', 'string', (o) => String(at(o, 'spec.nodeName') ?? '<none>'), 1),
  ],
  'apps/Deployment': [
    col('Ready', 'string', (o) => `${num(o, 'status.readyReplicas')}/${num(o, 'spec.replicas')}`),
    col('Up-to-date', 'integer', (o) => num(o, 'status.updatedReplicas')),
    col('Available', 'integer', (o) => num(o, 'status.availableReplicas')),
  ],
  'apps/StatefulSet': [col('Ready', 'string', (o) => `${num(o, 'status.readyReplicas')}/${num(o, 'spec.replicas')}`)],
  'apps/ReplicaSet': [
    col('Desired', 'integer', (o) => num(o, 'spec.replicas')),
    col('Current', 'integer', (o) => num(o, 'status.replicas')),
    col('Ready', 'integer', (o) => num(o, 'status.readyReplicas')),
  ],
  'apps/DaemonSet': [
    col('Desired', 'integer', (o) => num(o, 'status.desiredNumberScheduled')),
    col('Current', 'integer', (o) => num(o, 'status.currentNumberScheduled')),
    col('Ready', 'integer', (o) => num(o, 'status.numberReady')),
    col('Up-to-date', 'integer', (o) => num(o, 'status.updatedNumberScheduled')),
    col('Available', 'integer', (o) => num(o, 'status.numberAvailable')),
  ],
  'batch/Job': [col('Completions', 'string', (o) => `${num(o, 'status.succeeded')}/${at(o, 'spec.completions') ?? 1}`)],
  '/ConfigMap': [col('Data', 'integer', (o) => count(o, 'data') + count(o, 'binaryData'))],
  '/Secret': [
    col('Type', 'string', (o) => String(at(o, 'type') ?? 'Opaque')),
    col('Data', 'integer', (o) => count(o, 'data')),
  ],
  '/Namespace': [col('Status', 'string', (o) => String(at(o, 'status.phase') ?? 'Active'))],
  '/Service': [
    col('Type', 'string', (o) => String(at(o, 'spec.type') ?? 'ClusterIP')),
    col('Cluster-IP', 'string', (o) => String(at(o, 'spec.clusterIP') ?? '<none>')),
    col('Port(s)', 'string', (o) => {
      const ports = at(o, 'spec.ports');
      return Array.isArray(ports) && ports.length > 0
        ? (ports as Record<string, unknown>[])
            .map((p) => `${String(p['port'])}/${String(p['protocol'] ?? 'TCP')}`)
            .join(',')
        : '<none>';
    }),
  ],
};

// The JSONPath subset printer columns use: `.a.b`, `[0]`, and `[?(@.type=="Ready")]`.
function evalJsonPath(obj: unknown, path: string): unknown {
  const tokens = path.replace(/^\{|\}$/g, '').match(/\.[^.[]+|\[\?\(@\.[^=]+==["'][^"']*["']\)\]|\[\d+\]/g) ?? [];
  let cur: unknown = obj;
  for (const t of tokens) {
    if (cur === undefined || cur === null) return undefined;
    if (t.startsWith('[?')) {
      const m = /\[\?\(@\.([^=]+)==["']([^"']*)["']\)\]/.exec(t);
      cur = Array.isArray(cur) && m ? cur.find((x) => at(x, m[1] ?? '') === m[2]) : undefined;
    } else if (t.startsWith('[')) {
      cur = Array.isArray(cur) ? cur[Number(t.slice(1, -1))] : undefined;
    } else {
      cur = typeof cur === 'object' ? (cur as Record<string, unknown>)[t.slice(1)] : undefined;
    }
  }
  return cur;
}

function crdColumns(crd: KubeObject | undefined, version: string): Column[] {
  const versions = at(crd, 'spec.versions');
  const v = Array.isArray(versions)
    ? (versions as Record<string, unknown>[]).find((x) => x['name'] === version)
    : undefined;
  const defs = v?.['additionalPrinterColumns'];
  if (!Array.isArray(defs)) return [];
  return (defs as Record<string, unknown>[]).map((d) => {
    const type = (
      ['string', 'integer', 'number', 'boolean', 'date'].includes(String(d['type'])) ? d['type'] : 'string'
    ) as Column['type'];
    const path = String(d['jsonPath'] ?? '');
    return col(
      String(d['name'] ?? ''),
      type,
      (o) => {
        const value = evalJsonPath(o, path);
        if (value === undefined || value === null) return '';
        if (type === 'date') return formatAge(value);
        return typeof value === 'object' ? JSON.stringify(value) : (value as Cell);
      },
      typeof d['priority'] === 'number' ? d['priority'] : 0,
    );
  });
}

/** The columns for a type (CRD printer columns need the CRD object). */
export function selectColumns(type: ResourceType, version: string, crd: KubeObject | undefined): Column[] {
  if (type.custom) {
    const custom = crdColumns(crd, version);
    const hasAge = custom.some((c) => c.name === 'Age');
    return [NAME, ...custom, ...(hasAge ? [] : [AGE])];
  }
  const cols = BUILTIN_COLUMNS[`${type.group}/${type.kind}`] ?? [];
  const wide = cols.filter((c) => (c.priority ?? 0) > 0);
  return [NAME, ...cols.filter((c) => (c.priority ?? 0) === 0), AGE, ...wide];
}

function partialMetadata(obj: KubeObject): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: readMeta(obj) };
}

/** Builds a Table of objects; `includeObject=Object` embeds them whole, as the apiserver does. */
export function buildTable(
  columns: Column[],
  objects: KubeObject[],
  listMeta: Record<string, unknown>,
  includeObject: string | null,
  withDefinitions = true,
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    ...(withDefinitions
      ? {
          columnDefinitions: columns.map((c) => ({
            name: c.name,
            type: c.type,
            format: c.format ?? '',
            description: '',
            priority: c.priority ?? 0,
          })),
        }
      : {}),
    rows: objects.map((o) => ({
      cells: columns.map((c) => c.cell(o)),
      object: includeObject === 'Object' ? o : includeObject === 'None' ? null : partialMetadata(o),
    })),
  };
}
