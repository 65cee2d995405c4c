/**
 * The fleet's series as PostgreSQL writes them: one status line per live phase, changed-time and
 * resource lines only for phases not Current, stale lines for the phases whose stored status is stale
 * and for every phase of the clusters the staleness rule names, label values escaped as the text
 * format requires, and nothing of deleted phases or retired clusters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createFleetStateReader, type FleetStateReader } from '../../../src/store/read-fleet-state.ts';
import { insertPhaseInterval } from '../../helpers/history-rows.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';

let database: TestDatabase;
let db: Db;
let reader: FleetStateReader;
let eastId: number;
let westId: number;
const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 12, 0, s));
const lines = (text: string): string[] => (text === '' ? [] : text.split('\n').sort());

beforeAll(async () => {
  database = await createTestDatabase('read_fleet_state');
  db = createDb(database.url, { poolSize: 4 });
  reader = createFleetStateReader(db);
  const east = await db.cluster.create({ data: { name: 'east', reachable: true, lastGoodReadAt: at(30) } });
  const west = await db.cluster.create({ data: { name: 'we"st\\', reachable: false, lastGoodReadAt: at(30) } });
  const retired = await db.cluster.create({
    data: { name: 'old', reachable: true, lastGoodReadAt: at(30), retiredAt: at(40) },
  });
  eastId = east.id;
  westId = west.id;
  const phase = async (clusterId: number, namespace: string, name: string, deletedAt: Date | null = null) =>
    (
      await db.phase.create({
        data: { clusterId, sourceKind: 'cli-utils', namespace, name, firstSeenAt: at(0), lastSeenAt: at(0), deletedAt },
      })
    ).id;
  await insertPhaseInterval(db, {
    phaseId: await phase(east.id, 'shop', 'web'),
    status: 'Current',
    from: at(0),
    to: null,
    summary: { Current: 3 },
  });
  await insertPhaseInterval(db, {
    phaseId: await phase(east.id, 'shop', 'api'),
    status: 'InProgress',
    from: at(10),
    to: null,
    summary: { Current: 2, InProgress: 1, Failed: 0 },
  });
  await insertPhaseInterval(db, {
    phaseId: await phase(east.id, 'shop', 'db'),
    status: 'Failed',
    from: at(20),
    to: null,
    summary: { Failed: 1 },
    stale: true,
    staleSince: at(25),
  });
  await insertPhaseInterval(db, {
    phaseId: await phase(west.id, 'line\nbreak', 'x'),
    status: 'Current',
    from: at(0),
    to: null,
    summary: { Current: 1 },
  });
  await insertPhaseInterval(db, {
    phaseId: await phase(east.id, 'shop', 'gone', at(30)),
    status: 'Failed',
    from: at(0),
    to: null,
    summary: { Failed: 1 },
  });
  await insertPhaseInterval(db, {
    phaseId: await phase(retired.id, 'shop', 'retired'),
    status: 'Failed',
    from: at(0),
    to: null,
    summary: { Failed: 1 },
  });
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

describe('the fleet state reader', () => {
  it('lists the clusters not retired, with the facts the staleness rule needs', async () => {
    const clusters = await reader.clusters();
    expect(clusters.map((c) => [c.id, c.name, c.reachable])).toEqual([
      [eastId, 'east', true],
      [westId, 'we"st\\', false],
    ]);
  });

  it('writes one status line per live phase, and the detail series only for phases not Current', async () => {
    const series = await reader.series([]);
    const west = 'cluster="we\\"st\\\\",namespace="line\\nbreak",phase="x"';
    expect(lines(series.status)).toEqual([
      'phaselog_phase_status{cluster="east",namespace="shop",phase="api",source="cli-utils",status="InProgress"} 1',
      'phaselog_phase_status{cluster="east",namespace="shop",phase="db",source="cli-utils",status="Failed"} 1',
      'phaselog_phase_status{cluster="east",namespace="shop",phase="web",source="cli-utils",status="Current"} 1',
      `phaselog_phase_status{${west},source="cli-utils",status="Current"} 1`,
    ]);
    expect(lines(series.changed)).toEqual([
      `phaselog_phase_status_changed_timestamp_seconds{cluster="east",namespace="shop",phase="api"} ${at(10).getTime() / 1000}`,
      `phaselog_phase_status_changed_timestamp_seconds{cluster="east",namespace="shop",phase="db"} ${at(20).getTime() / 1000}`,
    ]);
    // Non-zero counts only.
    expect(lines(series.resources)).toEqual([
      'phaselog_phase_resources{cluster="east",namespace="shop",phase="api",status="Current"} 2',
      'phaselog_phase_resources{cluster="east",namespace="shop",phase="api",status="InProgress"} 1',
      'phaselog_phase_resources{cluster="east",namespace="shop",phase="db",status="Failed"} 1',
    ]);
    // Only the phase whose stored status is stale, while no cluster is named stale.
    expect(lines(series.stale)).toEqual(['phaselog_phase_stale{cluster="east",namespace="shop",phase="db"} 1']);
  });

  it("makes every phase of a cluster named stale stale, and no other cluster's fresh phases", async () => {
    const series = await reader.series([westId]);
    expect(lines(series.stale)).toEqual([
      'phaselog_phase_stale{cluster="east",namespace="shop",phase="db"} 1',
      'phaselog_phase_stale{cluster="we\\"st\\\\",namespace="line\\nbreak",phase="x"} 1',
    ]);
    expect(lines((await reader.series([eastId])).stale)).toHaveLength(3);
  });
});
