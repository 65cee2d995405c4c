/**
 * Where the store's loose types (text columns, JSON) meet the SDL's enums and scalars, the resolvers
 * convert: these run the real schema against stub stores holding what the database can hold.
 */
import type { ConditionRecord } from '../../../src/store/condition-store.ts';
import { graphql } from 'graphql';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/principal.ts';
import type { GraphqlContext, ReadApi } from '../../../src/graphql/context.ts';
import type { Loaders } from '../../../src/graphql/loaders.ts';
import { createSchema } from '../../../src/graphql/schema.ts';
import type { PhaseReader } from '../../../src/store/read-phases.ts';
import type { PhaseRecord } from '../../../src/store/read-types.ts';
import { FULL_ACCESS } from '../../../src/store/read-types.ts';
import type { StoredReport } from '../../../src/store/report-store.ts';

const schema = createSchema();
const admin: Principal = { kind: 'token', name: 'root', scopes: new Set(['admin']), access: FULL_ACCESS };

function phaseWith(status: string): PhaseRecord {
  return {
    id: 1,
    cluster: 'prod',
    clusterReachable: true,
    clusterLastGoodReadAt: null,
    clusterObservation: { lastObservedAt: new Date(), snapshotIntervalMs: 3_600_000, retiredAt: null },
    source: 'cli-utils',
    namespace: 'shop',
    name: 'web',
    inventoryId: 'web',
    labels: {},
    firstSeenAt: new Date(0),
    lastSeenAt: new Date(0),
    deletedAt: null,
    current: {
      phaseId: 1,
      status,
      message: '',
      summary: { Current: 2 },
      worstResource: null,
      stale: false,
      staleSince: null,
      unobserved: false,
      from: new Date(0),
      to: null,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Current',
          message: 'all current',
          lastTransitionTime: '2026-11-22T03:04:05Z',
        },
      ],
    },
  };
}

// Stubs hold only what the queries below reach; anything else would throw.
function contextWith(read: {
  phases?: Partial<PhaseReader>;
  stored?: StoredReport[];
  checkConditions?: ConditionRecord[];
}): GraphqlContext {
  const stored = read.stored ?? [];
  const api = {
    phases: read.phases,
    reports: {
      stored: {
        list: async () => stored.map(({ content: _content, ...rest }) => rest),
        get: async (id: number) => stored.find((r) => r.id === id) ?? null,
      },
    },
  } as unknown as ReadApi;
  return {
    requestId: 't',
    log: pino({ level: 'silent' }),
    principal: admin,
    read: api,
    loaders: { phaseConditions: { load: async () => read.checkConditions ?? [] } } as unknown as Loaders,
  } as unknown as GraphqlContext;
}

async function run(source: string, context: GraphqlContext) {
  return graphql({ schema, source, contextValue: context });
}

describe('resolvers shape stored values into the SDL', () => {
  it('shows a stored report format (lower-case in the store) as the ReportFormat enum', async () => {
    const stored: StoredReport[] = [
      { id: 4, createdAt: new Date('2026-11-01T00:00:00Z'), format: 'markdown', params: {}, content: '# report' },
    ];
    const result = await run(
      '{ storedReports { id format content } storedReport(id: "4") { format content } }',
      contextWith({ stored }),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      storedReports: [{ id: '4', format: 'MARKDOWN', content: '' }],
      storedReport: { format: 'MARKDOWN', content: '# report' },
    });
  });

  it('names a stored report format the API does not know instead of answering a wrong one', async () => {
    const stored: StoredReport[] = [{ id: 4, createdAt: new Date(0), format: 'pdf', params: {}, content: '' }];
    const result = await run('{ storedReport(id: "4") { format } }', contextWith({ stored }));
    expect(result.errors?.[0]?.message).toContain('stored report format "pdf"');
  });

  it('lists conditions from checks after the derived ones, with their source, and marks one whose check stopped running stale', async () => {
    const phases = { getPhasesByIds: async () => [phaseWith('Current')] };
    const from = new Date('2026-11-22T03:00:00Z');
    const checkConditions: ConditionRecord[] = [
      {
        phaseId: 1,
        type: 'health',
        source: 'http',
        status: 'False',
        reason: 'UnexpectedStatus',
        message: 'GET http://x/ answered 503',
        from,
        lastRunAt: new Date(),
        intervalMs: 30_000,
      },
      {
        phaseId: 1,
        type: 'promoted',
        source: 'webhook',
        status: 'True',
        reason: 'Merged',
        message: '',
        from,
        lastRunAt: from,
        intervalMs: 30_000,
      },
    ];
    const result = await run(
      '{ phase(id: "1") { conditions { type source status reason stale } } }',
      contextWith({ phases, checkConditions }),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      phase: {
        conditions: [
          { type: 'Ready', source: 'derived', status: 'True', reason: 'Current', stale: false },
          { type: 'health', source: 'http', status: 'False', reason: 'UnexpectedStatus', stale: false },
          { type: 'promoted', source: 'webhook', status: 'True', reason: 'Merged', stale: true },
        ],
      },
    });
  });

  it("returns a phase condition's RFC 3339 transition time as a DateTime", async () => {
    const phases = { getPhasesByIds: async () => [phaseWith('Current')] };
    const result = await run(
      '{ phase(id: "1") { status conditions { type status lastTransitionTime } } }',
      contextWith({ phases }),
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      phase: {
        status: 'Current',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-22T03:04:05.000Z' }],
      },
    });
  });

  it('reports a stored phase status that is not a kstatus status as an error on the field', async () => {
    const phases = { getPhasesByIds: async () => [phaseWith('Healthy')] };
    const result = await run('{ phase(id: "1") { name status } }', contextWith({ phases }));
    expect(result.errors?.[0]?.message).toBe('stored status "Healthy" is not a kstatus status');
    expect(result.errors?.[0]?.path).toEqual(['phase', 'status']);
  });
});
