/**
 * One member of the cluster ownership in a process of its own, for the SIGKILL test: joins with the
 * clusters and timings of OWNERSHIP_TEST (JSON), prints "owned <n>" after every round, and runs until killed.
 */
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { newInstance, startOwnership } from '../../../src/queue/ownership.ts';

const options = JSON.parse(process.env.OWNERSHIP_TEST ?? '{}') as {
  redisUrl: string;
  prefix: string;
  workerId: string;
  clusters: string[];
  heartbeatMs: number;
  leaseMs: number;
};
const redis = new Redis(options.redisUrl);
const ownership = await startOwnership({
  redis,
  prefix: options.prefix,
  instance: newInstance(options.workerId),
  clusters: options.clusters,
  heartbeatMs: options.heartbeatMs,
  leaseMs: options.leaseMs,
  log: pino({ level: 'silent' }),
  acquire: () => {},
  release: () => {},
  onRound: () => process.stdout.write(`owned ${ownership?.owned().length ?? 0}\n`),
});
process.stdout.write(`instance ${ownership.instance}\n`);
