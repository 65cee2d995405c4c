/**
 * Configuration for running on several machines (issue #23): a read database for the API
 * (`database.readUrl`) and a worker's identity (`worker.id`), from phaselog.yaml and from the
 * environment, with bad values named by key.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { dirWith, issuesOf } from '../../helpers/config.ts';

const PRIMARY = 'postgresql://phaselog:secret@db-primary:5432/phaselog';
const REPLICA = 'postgresql://phaselog:secret@db-replica:5432/phaselog';

describe('database.readUrl', () => {
  it('is read from PHASELOG_DATABASE_READ_URL and from phaselog.yaml, the environment winning', () => {
    expect(loadConfig({ DATABASE_URL: PRIMARY, PHASELOG_DATABASE_READ_URL: REPLICA }, dirWith()).database).toEqual({
      url: PRIMARY,
      readUrl: REPLICA,
      poolSize: 10,
    });
    const dir = dirWith(`database:\n  url: ${PRIMARY}\n  readUrl: postgres://other:5432/phaselog\n`);
    expect(loadConfig({}, dir).database.readUrl).toBe('postgres://other:5432/phaselog');
    expect(loadConfig({ PHASELOG_DATABASE_READ_URL: REPLICA }, dir).database.readUrl).toBe(REPLICA);
  });

  it('is optional, and may equal the primary URL', () => {
    expect(loadConfig({ DATABASE_URL: PRIMARY }, dirWith()).database).toEqual({ url: PRIMARY, poolSize: 10 });
    expect(loadConfig({ DATABASE_URL: PRIMARY, PHASELOG_DATABASE_READ_URL: PRIMARY }, dirWith()).database.readUrl).toBe(
      PRIMARY,
    );
  });

  it.each([
    ['a MySQL URL', 'mysql://db/phaselog'],
    ['a host name alone', 'db-replica'],
    ['a URL with a space', 'postgresql://db replica/phaselog'],
    ['an http URL', 'http://db-replica:5432/phaselog'],
  ])('refuses %s, naming the variable and the key', (_what, value) => {
    const issues = issuesOf(() => loadConfig({ DATABASE_URL: PRIMARY, PHASELOG_DATABASE_READ_URL: value }, dirWith()));
    expect(issues).toEqual([
      { key: 'PHASELOG_DATABASE_READ_URL (database.readUrl)', message: 'must be a postgres:// or postgresql:// URL' },
    ]);
  });

  it('refuses a bad readUrl in phaselog.yaml by its key', () => {
    const issues = issuesOf(() => loadConfig({}, dirWith(`database:\n  url: ${PRIMARY}\n  readUrl: 5432\n`)));
    expect(issues.map((i) => i.key)).toEqual(['database.readUrl']);
  });

  it('refuses a readUrl without a database.url: the embedded PostgreSQL has no replica', () => {
    const issues = issuesOf(() => loadConfig({ PHASELOG_DATABASE_READ_URL: REPLICA }, dirWith()));
    expect(issues).toHaveLength(1);
    expect(issues[0]?.key).toBe('PHASELOG_DATABASE_READ_URL (database.readUrl)');
    expect(issues[0]?.message).toContain('needs database.url (DATABASE_URL)');
  });
});

describe('database.poolSize', () => {
  it('is 10 unless set, from PHASELOG_DATABASE_POOL_SIZE or phaselog.yaml', () => {
    expect(loadConfig({}, dirWith()).database.poolSize).toBe(10);
    expect(loadConfig({ PHASELOG_DATABASE_POOL_SIZE: '4' }, dirWith()).database.poolSize).toBe(4);
    expect(loadConfig({}, dirWith('database:\n  poolSize: 40\n')).database.poolSize).toBe(40);
  });

  it.each(['0', '1', '-3', '2.5', 'many', '1001'])('refuses %j, naming the variable and the key', (value) => {
    expect(issuesOf(() => loadConfig({ PHASELOG_DATABASE_POOL_SIZE: value }, dirWith())).map((i) => i.key)).toEqual([
      'PHASELOG_DATABASE_POOL_SIZE (database.poolSize)',
    ]);
  });
});

describe('worker.id', () => {
  it('is read from PHASELOG_WORKER_ID (a pod name) and from phaselog.yaml', () => {
    expect(loadConfig({ PHASELOG_WORKER_ID: 'phaselog-worker-7d9c5b6f4-x2x9q' }, dirWith()).worker).toEqual({
      id: 'phaselog-worker-7d9c5b6f4-x2x9q',
      heartbeat: 2000,
      lease: 10_000,
    });
    expect(loadConfig({}, dirWith('worker:\n  id: worker_1.eu\n')).worker.id).toBe('worker_1.eu');
    expect(loadConfig({}, dirWith()).worker).toEqual({ heartbeat: 2000, lease: 10_000 });
  });

  it('accepts 200 characters', () => {
    expect(loadConfig({ PHASELOG_WORKER_ID: 'w'.repeat(200) }, dirWith()).worker.id).toHaveLength(200);
  });

  it.each([
    ['201 characters', 'w'.repeat(201)],
    ['a space', 'worker 1'],
    ['a colon (Redis key separator)', 'worker:1'],
    ['a slash', 'worker/1'],
    ['a newline', 'worker\n1'],
    ['braces (a Redis Cluster hash tag)', 'worker{1}'],
  ])('refuses an id with %s, naming the variable and the key', (_what, value) => {
    const issues = issuesOf(() => loadConfig({ PHASELOG_WORKER_ID: value }, dirWith()));
    expect(issues.map((i) => i.key)).toEqual(['PHASELOG_WORKER_ID (worker.id)']);
  });

  it('reports an empty id in phaselog.yaml (an empty environment variable counts as unset)', () => {
    expect(issuesOf(() => loadConfig({}, dirWith('worker:\n  id: ""\n'))).map((i) => i.key)).toEqual(['worker.id']);
    expect(loadConfig({ PHASELOG_WORKER_ID: '' }, dirWith()).worker).toEqual({ heartbeat: 2000, lease: 10_000 });
  });

  it('takes the ownership timing from phaselog.yaml, and refuses a lease a live worker could not renew in time', () => {
    expect(loadConfig({}, dirWith('worker:\n  heartbeat: 1s\n  lease: 5s\n')).worker).toEqual({
      heartbeat: 1000,
      lease: 5000,
    });
    expect(
      issuesOf(() => loadConfig({}, dirWith('worker:\n  heartbeat: 5s\n  lease: 10s\n'))).map((i) => i.key),
    ).toEqual(['worker.lease']);
    expect(issuesOf(() => loadConfig({}, dirWith('worker:\n  lease: -5s\n'))).map((i) => i.key)).toEqual([
      'worker.lease',
    ]);
    expect(issuesOf(() => loadConfig({}, dirWith('worker:\n  heartbeat: 0\n'))).map((i) => i.key)).toEqual([
      'worker.heartbeat',
    ]);
  });
});
