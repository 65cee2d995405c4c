/**
 * Fault: the API process (role api, beside a worker process) is killed with SIGKILL and a new one
 * started. The worker records what changes meanwhile; a subscriber that resumes from the last seq
 * it received gets every change exactly once across the restart, and gates answer from the new API.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../src/runtime/wait.ts';
import { createTestDatabase, testRedisUrl, type TestDatabase } from '../helpers/services.ts';
import { createFaultBed, NAMESPACE, PHASE, RECOVERY_MS, type FaultBed, type LoggedChange } from './harness.ts';

/** Subscribes to the bed cluster's phase changes after `after`, pushing each event to `into`. */
function subscribe(url: string, cluster: string, after: string | null, into: LoggedChange[]): Client {
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
  });
  client.subscribe<{ phaseStatusChanged: LoggedChange }>(
    {
      query: `subscription($after: String, $cluster: String) { phaseStatusChanged(after: $after, filter: { cluster: $cluster }) { seq at cluster scope phase { name } resourceKey fromStatus toStatus } }`,
      variables: { after, cluster },
    },
    {
      next: (event) => void (event.data && into.push(event.data.phaseStatusChanged)),
      error: () => {},
      complete: () => {},
    },
  );
  return client;
}

describe('fault: API restart', () => {
  let database: TestDatabase;
  let bed: FaultBed;
  const clients: Client[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('fault_api');
    bed = await createFaultBed({ label: 'api', redisUrl: testRedisUrl(), databaseUrl: database.url });
  });
  afterAll(async () => {
    for (const client of clients) await client.dispose();
    await bed?.close();
    await database?.drop();
  });

  it('a subscriber resuming by seq gets each change once across the restart; gates answer from the new API', async () => {
    const [first] = await Promise.all([bed.start('api'), bed.start('worker')]);
    await bed.markBaseline();
    bed.startPolling();

    const received: LoggedChange[] = [];
    const ofPhase = () => received.filter((c) => c.phase?.name === PHASE);
    // From the baseline's seq: catch-up from the log covers a change published before the
    // subscription is live.
    clients.push(subscribe(first.graphqlUrl as string, bed.clusterName, String(bed.baselineSeq()), received));
    bed.drive('InProgress');
    await waitFor(() => ofPhase().some((c) => c.toStatus === 'InProgress'), {
      timeoutMs: RECOVERY_MS,
      intervalMs: 100,
      what: 'the live event of the first change',
    });

    await bed.kill(first);
    const killedAt = Date.now();
    bed.drive('Current');
    const second = await bed.start('api');
    const lastSeq = received.at(-1)?.seq ?? null;
    clients.push(subscribe(second.graphqlUrl as string, bed.clusterName, lastSeq, received));
    await bed.waitRecorded('the change made while the API was down to be in the log', RECOVERY_MS);
    bed.drive('InProgress');
    await bed.waitRecorded('a change after the restart to be recorded', RECOVERY_MS);
    await waitFor(() => ofPhase().length >= 3, {
      timeoutMs: RECOVERY_MS,
      intervalMs: 100,
      what: 'the subscriber to receive the three changes',
    }).catch(() => {});

    const events = ofPhase().filter((c) => c.scope === 'phase');
    expect(
      events.map((c) => `${c.fromStatus}->${c.toStatus}`),
      'each change once, in order, across the restart',
    ).toEqual(['Current->InProgress', 'InProgress->Current', 'Current->InProgress']);
    const seqs = received.map((c) => BigInt(c.seq));
    expect(
      seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as bigint)),
      `seqs received strictly increase: ${seqs.join(', ')}`,
    ).toBe(true);

    const gate = await bed.graphql<{ gate: { reason: string } }>(
      `query($phase: PhaseRef!) { gate(phase: $phase, status: InProgress, for: "1s") { reason } }`,
      { phase: { cluster: bed.clusterName, namespace: NAMESPACE, name: PHASE } },
    );
    expect(['HELD', 'NOT_HELD_LONG_ENOUGH']).toContain(gate.gate.reason);
    expect(bed.readyAfter(killedAt).ready, 'the new API says ready').toBe(true);
    expect(await bed.verdict()).toEqual([]);
  }, 150_000);
});
