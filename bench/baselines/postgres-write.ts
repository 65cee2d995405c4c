/**
 * Baseline: how fast this machine's Postgres takes rows shaped like a status change (6 columns, a
 * primary key and one secondary index), written three ways into a scratch database:
 *   - multi-row INSERT, 1,000 rows per statement, through node `pg` (what an ORM batch can reach);
 *   - bulk INSERT ... SELECT FROM unnest($1::int[], ...), 10,000 rows per statement, through `pg`
 *     (the bulk path available without pg-copy-streams, which is not installed here);
 *   - COPY ... FROM STDIN through `psql` when it is on PATH (the server's fastest ingest; the time
 *     includes starting psql and generating the text).
 * Plus bytes per row on disk (heap + both indexes) from pg_total_relation_size.
 *
 *   node --import tsx bench/baselines/postgres-write.ts [--rows 200000]
 */
import { spawn, spawnSync } from 'node:child_process';
import pg from 'pg';
import { isMain, printFigures, readNumberFlag } from '../lib/cli.ts';
import { createScratchDatabase } from '../lib/scratch-db.ts';
import { perSecond, round, timeAsync } from '../lib/stats.ts';
import type { Figures } from '../lib/types.ts';

/** Options of {@link run}. */
export interface PostgresWriteBaselineOptions {
  /** Rows written by each method. @default 200000 */
  rows?: number;
}

const COLUMNS = ['resource_id', 'cluster', 'status', 'observed_at', 'generation', 'message'] as const;
const STATUSES = ['Current', 'InProgress', 'Current', 'Current', 'Failed'];
const BASE_TIME = Date.parse('2026-11-20T09:00:00Z');

interface Row {
  resourceId: number;
  cluster: string;
  status: string;
  observedAt: string;
  generation: number;
  message: string;
}

function makeRow(i: number): Row {
  const status = STATUSES[i % STATUSES.length] ?? 'Current';
  return {
    resourceId: i % 20_000,
    cluster: `cluster-${i % 10}`,
    status,
    observedAt: new Date(BASE_TIME + i * 10).toISOString(),
    generation: 1 + (i % 9),
    message: status === 'Current' ? 'Deployment is available. Replicas: 3' : 'Deployment does not have minimum availability.',
  };
}

async function createTable(client: pg.Client, table: string): Promise<void> {
  await client.query(`CREATE TABLE ${table} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    resource_id integer NOT NULL,
    cluster text NOT NULL,
    status text NOT NULL,
    observed_at timestamptz NOT NULL,
    generation bigint NOT NULL,
    message text NOT NULL)`);
  await client.query(`CREATE INDEX ${table}_resource_time ON ${table} (resource_id, observed_at)`);
}

async function insertBatches(client: pg.Client, table: string, rows: number, batch: number): Promise<void> {
  for (let start = 0; start < rows; start += batch) {
    const n = Math.min(batch, rows - start);
    const values: unknown[] = [];
    const tuples: string[] = [];
    for (let k = 0; k < n; k++) {
      const r = makeRow(start + k);
      const p = k * 6;
      tuples.push(`($${p + 1},$${p + 2},$${p + 3},$${p + 4},$${p + 5},$${p + 6})`);
      values.push(r.resourceId, r.cluster, r.status, r.observedAt, r.generation, r.message);
    }
    await client.query(`INSERT INTO ${table} (${COLUMNS.join(',')}) VALUES ${tuples.join(',')}`, values);
  }
}

async function insertUnnest(client: pg.Client, table: string, rows: number, batch: number): Promise<void> {
  for (let start = 0; start < rows; start += batch) {
    const n = Math.min(batch, rows - start);
    const cols: [number[], string[], string[], string[], number[], string[]] = [[], [], [], [], [], []];
    for (let k = 0; k < n; k++) {
      const r = makeRow(start + k);
      cols[0].push(r.resourceId);
      cols[1].push(r.cluster);
      cols[2].push(r.status);
      cols[3].push(r.observedAt);
      cols[4].push(r.generation);
      cols[5].push(r.message);
    }
    await client.query(
      `INSERT INTO ${table} (${COLUMNS.join(',')})
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::timestamptz[], $5::bigint[], $6::text[])`,
      cols,
    );
  }
}

function hasPsql(): boolean {
  return spawnSync('psql', ['--version'], { stdio: 'ignore' }).status === 0;
}

function copyWithPsql(connectionString: string, table: string, rows: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', connectionString, '-c', `COPY ${table} (${COLUMNS.join(',')}) FROM STDIN`], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`psql COPY exited ${code}: ${stderr.trim()}`))));
    const chunk = 10_000;
    let next = 0;
    const write = (): void => {
      while (next < rows) {
        const lines: string[] = [];
        for (let k = next; k < Math.min(rows, next + chunk); k++) {
          const r = makeRow(k);
          lines.push(`${r.resourceId}\t${r.cluster}\t${r.status}\t${r.observedAt}\t${r.generation}\t${r.message}\n`);
        }
        next += chunk;
        if (!child.stdin.write(lines.join(''))) {
          child.stdin.once('drain', write);
          return;
        }
      }
      child.stdin.end();
    };
    write();
  });
}

async function bytesPerRow(client: pg.Client, table: string, rows: number): Promise<number> {
  const result = await client.query<{ bytes: string }>(`SELECT pg_total_relation_size('${table}')::text AS bytes`);
  return Math.round(Number(result.rows[0]?.bytes ?? 0) / rows);
}

/** Writes `rows` rows with each method into a scratch database (dropped afterwards) and returns rows/s. */
export async function run(options: PostgresWriteBaselineOptions = {}): Promise<Figures> {
  const rows = options.rows ?? 200_000;
  const db = await createScratchDatabase('pgwrite');
  const client = new pg.Client({ connectionString: db.connectionString });
  try {
    await client.connect();
    for (const table of ['warm', 'by_insert', 'by_unnest', 'by_copy']) await createTable(client, table);
    await insertBatches(client, 'warm', Math.min(rows, 5_000), 1_000);
    const insertMs = await timeAsync(() => insertBatches(client, 'by_insert', rows, 1_000));
    const unnestMs = await timeAsync(() => insertUnnest(client, 'by_unnest', rows, 10_000));
    const figures: Figures = {
      rows,
      'INSERT 1,000-row batches rows/s': perSecond(rows, insertMs),
      'INSERT ... unnest 10,000-row batches rows/s': perSecond(rows, unnestMs),
    };
    if (hasPsql()) {
      const copyMs = await timeAsync(() => copyWithPsql(db.connectionString, 'by_copy', rows));
      figures['COPY FROM STDIN (psql) rows/s'] = perSecond(rows, copyMs);
    } else {
      figures['COPY FROM STDIN (psql) rows/s'] = 'psql not on PATH';
    }
    figures['bytes per row (heap + 2 indexes)'] = await bytesPerRow(client, 'by_insert', rows);
    figures['INSERT batches ms'] = round(insertMs);
    return figures;
  } finally {
    await client.end().catch(() => undefined);
    await db.drop();
  }
}

if (isMain(import.meta.url)) {
  printFigures('Postgres writes of a 6-column row with 2 indexes', await run({ rows: readNumberFlag('rows') }));
}
