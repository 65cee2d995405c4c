/**
 * http checks at fleet size: one cluster with N phases, one `http` check selecting them all, run as
 * the check worker runs it (one batch per cluster per tick, bounded concurrency), against a health
 * endpoint served by a separate process so its CPU is not counted. Reports the worker's CPU per
 * tick (user + system of this process), that as a share of one core at a 30 s interval, the wall
 * time of a tick, and the rows an unchanged tick writes (the first tick creates the conditions;
 * later ones find them unchanged).
 *
 *   node --import tsx bench/http-checks.ts [--phases 1000] [--ticks 5]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { checkSchema } from '../src/checks/config.ts';
import { runCheckOnCluster } from '../src/services/run-check.ts';
import { createConditionStore } from '../src/store/condition-store.ts';
import { migrateDatabase } from '../src/store/migrate.ts';
import { createDb } from '../src/store/prisma.ts';
import { createHistoryReader } from '../src/store/read-history.ts';
import { createPhaseReader } from '../src/store/read-phases.ts';
import { createScratchDatabase } from './lib/scratch-db.ts';

/** Options for {@link run}. */
export interface HttpChecksBenchOptions {
  /** Phases the check selects. @default 1000 */
  phases?: number;
  /** Measured ticks after the first. @default 5 */
  ticks?: number;
  /** The check's interval, for the share of a core. @default 30000 */
  intervalMs?: number;
}

const SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('ok'); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

async function startServer(): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  return { port: Number(chunk.toString().trim()), child };
}

/** Runs the benchmark and returns its figures. */
export async function run(options: HttpChecksBenchOptions = {}): Promise<Record<string, number | string>> {
  const phases = options.phases ?? 1000;
  const ticks = options.ticks ?? 5;
  const intervalMs = options.intervalMs ?? 30_000;
  const scratch = await createScratchDatabase('http_checks');
  const server = await startServer();
  const db = createDb(scratch.connectionString, { poolSize: 4 });
  try {
    await migrateDatabase(scratch.connectionString);
    const [cluster] = await db.$queryRaw<
      { id: number }[]
    >`INSERT INTO "Cluster" ("name") VALUES ('bench') RETURNING "id"`;
    await db.$executeRaw`
      INSERT INTO "Phase" ("clusterId", "sourceKind", "namespace", "name", "firstSeenAt", "lastSeenAt")
      SELECT ${cluster?.id}::int, 'cli-utils', 'ns-' || (n / 50), 'phase-' || n, now(), now() FROM generate_series(1, ${phases}::int) AS n`;
    const check = checkSchema.parse({
      name: 'health',
      interval: intervalMs,
      timeout: '5s',
      http: { url: `http://127.0.0.1:${server.port}/{{ namespace }}/{{ name }}/healthz` },
    });
    const deps = {
      phases: createPhaseReader(db),
      history: createHistoryReader(db),
      conditions: createConditionStore(db),
      readSecret: async () => '',
      log: pino({ level: 'silent' }),
    };
    // First tick: every condition is new.
    const first = await runCheckOnCluster(deps, check, 'bench', new Date());
    let cpuMicros = 0;
    let wallMs = 0;
    let rows = 0;
    for (let n = 0; n < ticks; n++) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const outcome = await runCheckOnCluster(deps, check, 'bench', new Date());
      wallMs += performance.now() - started;
      const used = process.cpuUsage(cpu);
      cpuMicros += used.user + used.system;
      rows += outcome.written.rows;
    }
    const cpuMsPerTick = cpuMicros / 1000 / ticks;
    return {
      phases,
      firstTickRows: first.written.rows,
      'worker CPU ms per tick': Math.round(cpuMsPerTick),
      [`% of one core at a ${intervalMs / 1000} s interval`]: Number(((100 * cpuMsPerTick) / intervalMs).toFixed(2)),
      'wall ms per tick': Math.round(wallMs / ticks),
      'rows per unchanged tick': rows / ticks,
    };
  } finally {
    await db.$disconnect();
    server.child.kill();
    await scratch.drop();
  }
}

function readNumber(argv: string[], flag: string): number | undefined {
  const index = argv.indexOf(flag);
  const value = index === -1 ? undefined : Number(argv[index + 1]);
  return value !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const phases = readNumber(process.argv, '--phases');
  const ticks = readNumber(process.argv, '--ticks');
  console.log(await run({ ...(phases ? { phases } : {}), ...(ticks ? { ticks } : {}) }));
}
