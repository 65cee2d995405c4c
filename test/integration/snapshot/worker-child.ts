/**
 * A snapshot worker in a process of its own, for the crash tests: reads its database, queue and
 * kubeconfig from SNAPSHOT_TEST_* variables, prints "ready" once it takes jobs, and runs until killed.
 * With SNAPSHOT_TEST_DEFAULT_LOCKS=1 it keeps startWorkers' own lock settings, as a deployed worker does.
 */
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import { createDb } from '../../../src/store/prisma.ts';
import { startWorkers } from '../../../workers/start-workers.ts';
import { REDIS_URL, testLogger } from './helpers.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const db = createDb(env('SNAPSHOT_TEST_DATABASE_URL'), { poolSize: 2 });
const queueName = env('SNAPSHOT_TEST_QUEUE');
const { clusters } = loadKubeconfigClusters({
  path: env('SNAPSHOT_TEST_KUBECONFIG'),
  name: env('SNAPSHOT_TEST_CLUSTER'),
});
await startWorkers({
  config: { snapshot: { interval: 60_000 }, health: undefined, baseDir: process.cwd() },
  db,
  redisUrl: REDIS_URL,
  log: testLogger(),
  clusters,
  queueName,
  prefix: queueName,
  channelPrefix: queueName,
  schedule: false,
  ...(process.env.SNAPSHOT_TEST_DEFAULT_LOCKS === '1'
    ? {}
    : {
        lockDurationMs: 1000,
        stalledIntervalMs: 500,
        clusterLockTtlMs: 1000,
        ownership: { heartbeatMs: 250, leaseMs: 1500 },
      }),
});
process.stdout.write('ready\n');
