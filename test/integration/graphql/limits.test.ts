/**
 * Request limits: depth, cost, page size, aliases, tokens, directives, document and body size,
 * introspection, CSRF prevention. Hostile queries go over HTTP and over graphql-ws alike.
 */
import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../../../src/store/prisma.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/services.ts';
import { gql, gqlData, startTestApi, wsClient, type GqlResult, type TestApi } from './helpers.ts';
import { seedHistory } from './seed.ts';

let database: TestDatabase;
let db: Db;
let api: TestApi;
/** A server with every limit at its default, introspection and GraphiQL on (as phaselog starts). */
let defaults: TestApi;

beforeAll(async () => {
  database = await createTestDatabase('gql_limits');
  await seedHistory(database.url);
  db = createDb(database.url, { poolSize: 2 });
  api = await startTestApi({ db, introspection: false, maxDepth: 7, maxCost: 2_000 });
  defaults = await startTestApi({ db, graphiql: true });
});

afterAll(async () => {
  await api?.close();
  await defaults?.close();
  await db?.$disconnect();
  await database?.drop();
});

describe('query limits', () => {
  it('refuses a query deeper than the limit before running it', async () => {
    const result = await gql(
      api.url,
      '{ phases { edges { node { statusAt(at: "2026-01-01T00:30:00Z") { resources { edges { node { key } } } } } } } }',
    );
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'depth' });
    expect(result.errors?.[0]?.message).toBe('the query is more than 7 levels deep (the limit)');
  });

  it('prices page sizes: the same selection passes with small pages and is refused with large ones', async () => {
    const query = (n: number) =>
      `{ phases(first: ${n}) { edges { node { resources(first: ${n}) { edges { node { key status } } } } } } }`;
    expect((await gql(api.url, query(5))).errors).toBeUndefined();
    const big = await gql(api.url, query(100));
    expect(big.errors?.[0]?.extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', limit: 'cost' });
    expect(big.errors?.[0]?.message).toMatch(/^the query costs \d+; the limit is 2000/);
  });

  it('prices a phases page size the rule cannot see at the largest phases page (1,000), other lists at 100', async () => {
    const phases = await gql(api.url, 'query($n: Int) { phases(first: $n) { edges { node { name } } } }', {});
    expect(phases.errors?.[0]?.message).toMatch(/^the query costs 3001; the limit is 2000/);
    const phase = await gql(
      api.url,
      'query($n: Int) { phase(cluster: "prod", namespace: "shop", name: "web") { resources(first: $n) { edges { node { key } } } } }',
      {},
    );
    expect(phase.errors).toBeUndefined();
  });

  it('refuses introspection when it is switched off, and still answers ordinary queries', async () => {
    const result = await gql(api.url, '{ __schema { types { name } } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await gqlData(api.url, '{ about { version } }')).toEqual({ about: { version: 'test' } });
  });

  describe('field suggestions follow introspection', () => {
    const MISSPELT: [string, string, Record<string, unknown>, string][] = [
      ['a root field', '{ toke { name } }', {}, 'tokens'],
      ['a field below the root', '{ phases { edges { node { statu } } } }', {}, 'status'],
      ['an input field', '{ phases(filter: { serch: "x" }) { edges { cursor } } }', {}, 'search'],
      ['an argument', '{ phases(firs: 1) { edges { cursor } } }', {}, 'first'],
      [
        'an enum value in a variable',
        'query($o: PhaseOrder) { phases(orderBy: $o) { edges { cursor } } }',
        { o: 'NAM' },
        'NAME',
      ],
      ['a type in a variable', 'query($f: PhaseFiltr) { phases(filter: $f) { edges { cursor } } }', {}, 'PhaseFilter'],
    ];

    it.each(MISSPELT)(
      'with introspection off, %s gets no suggestion over HTTP',
      async (_label, query, variables, name) => {
        const result = await gql(api.url, query, variables);
        expect(result.status).toBe(400);
        const messages = (result.errors ?? []).map((e) => e.message).join('\n');
        expect(messages).toMatch(/\S/);
        expect(messages).not.toMatch(/Did you mean/);
        expect(messages).not.toContain(`"${name}"`);
      },
    );

    it.each(MISSPELT)(
      'with introspection off, %s gets no suggestion over WebSocket',
      async (_label, query, variables, name) => {
        const client = wsClient(api.wsUrl);
        try {
          const messages: string[] = [];
          try {
            for await (const result of client.iterate({ query, variables }))
              messages.push(...(result.errors ?? []).map((e) => e.message));
          } catch (errors) {
            // graphql-ws rejects with the error messages of a refused subscribe.
            messages.push(...(errors as { message: string }[]).map((e) => e.message));
          }
          expect(messages.join('\n')).toMatch(/\S/);
          expect(messages.join('\n')).not.toMatch(/Did you mean/);
          expect(messages.join('\n')).not.toContain(`"${name}"`);
        } finally {
          await client.dispose();
        }
      },
    );

    it('with introspection on (the default), suggestions stay: GraphiQL and developers use them', async () => {
      const result = await gql(defaults.url, '{ toke { name } }');
      expect(result.errors?.[0]?.message).toBe('Cannot query field "toke" on type "Query". Did you mean "tokens"?');
    });
  });

  it('refuses a body over the size cap with 413', async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ about { version } } #${'x'.repeat(1024 * 1024)}` }),
    });
    expect(res.status).toBe(413);
  });
});

describe('CSRF prevention', () => {
  it('refuses a simple GET without a preflight-forcing header', async () => {
    const res = await fetch(`${api.url}?query=${encodeURIComponent('{ about { version } }')}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('CSRF');
  });

  it('refuses a text/plain POST (a "simple" cross-site request)', async () => {
    const res = await fetch(api.url, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ query: '{ about { version } }' }),
    });
    expect(res.status).toBe(400);
  });

  it('answers a GET that carries apollo-require-preflight', async () => {
    const res = await fetch(`${api.url}?query=${encodeURIComponent('{ about { version } }')}`, {
      headers: { 'apollo-require-preflight': 'true' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { about: { version: 'test' } } });
  });
});

type Transport = 'http' | 'ws';

/** Runs one operation over graphql-ws: its result, or the errors the server answered it with. */
async function overWebSocket(
  url: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<Omit<GqlResult, 'status'>> {
  const client = wsClient(url);
  try {
    return await new Promise((resolve, reject) => {
      let result: Omit<GqlResult, 'status'> = {};
      client.subscribe(
        { query, variables },
        {
          next: (value) => {
            result = value as Omit<GqlResult, 'status'>;
          },
          // An array of GraphQL errors is the server's answer; anything else (a closed socket) is a failure.
          error: (error) =>
            Array.isArray(error)
              ? resolve({ errors: error as GqlResult['errors'] })
              : reject(
                  error instanceof Error
                    ? error
                    : new Error(`WebSocket closed: ${JSON.stringify(error, ['code', 'reason'])}`),
                ),
          complete: () => resolve(result),
        },
      );
    });
  } finally {
    await client.dispose();
  }
}

/** Runs one operation against the default-limits server over `transport`. */
async function run(
  transport: Transport,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Omit<GqlResult, 'status'>> {
  if (transport === 'ws') return overWebSocket(defaults.wsUrl, query, variables);
  const { status, ...result } = await gql(defaults.url, query, variables);
  // Refused before it ran: Apollo answers 400 with no data.
  if (result.data === undefined) expect(status).toBe(400);
  return result;
}

const codes = (result: Omit<GqlResult, 'status'>) => (result.errors ?? []).map((e) => e.extensions?.code);
const limits = (result: Omit<GqlResult, 'status'>) => (result.errors ?? []).map((e) => e.extensions?.limit);
const aliases = (n: number, selection: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => `a${i}: ${selection(i)}`).join(' ');
const WEB = 'phase(cluster: "prod", namespace: "shop", name: "web")';
const FLEET = 'phases(first: 1000) { edges { node { resources(first: 100) { edges { node { key } } } } } }';

describe.each<Transport>(['http', 'ws'])('hostile queries over %s, default limits', (transport) => {
  describe('page sizes (#17 item 6)', () => {
    it('refuses a negative page size in one alias before costing, so it cannot lower the cost of 20 fleet-wide ones', async () => {
      const result = await run(
        transport,
        `{ ${aliases(20, () => FLEET)} neg: ${WEB} { resources(first: -2147483648) { edges { node { key } } } } }`,
      );
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['BAD_USER_INPUT']);
      expect(limits(result)).toEqual(['pageSize']);
      expect(result.errors?.[0]?.message).toBe('resources: first must be between 1 and 100, got -2147483648');
    });

    it.each([0, -1, 101])('refuses first: %i written in the query, before running anything', async (size) => {
      const result = await run(
        transport,
        `{ about { version } ${WEB} { resources(first: ${size}) { edges { node { key } } } } }`,
      );
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['BAD_USER_INPUT']);
      expect(limits(result)).toEqual(['pageSize']);
    });

    it.each([0, -1, -2147483648, 1001])(
      'refuses first: %i given by a variable, before running anything',
      async (size) => {
        const result = await run(
          transport,
          `query($n: Int) { about { version } ${WEB} { resources(first: 5) { edges { node { key } } } } phases(first: $n) { edges { node { name } } } }`,
          { n: size },
        );
        expect(result.data).toBeUndefined();
        expect(codes(result)).toEqual(['BAD_USER_INPUT']);
        expect(limits(result)).toEqual(['pageSize']);
      },
    );

    it('refuses a page size from a variable default, and answers an allowed one', async () => {
      const query = `query($n: Int = -1) { ${WEB} { resources(first: $n) { edges { node { key } } } } }`;
      const refused = await run(transport, query);
      expect(refused.data).toBeUndefined();
      expect(codes(refused)).toEqual(['BAD_USER_INPUT']);
      expect(limits(refused)).toEqual(['pageSize']);
      const answered = await run(transport, query, { n: 2 });
      expect(answered.errors).toBeUndefined();
      expect(answered.data).toMatchObject({
        phase: { resources: { edges: [{ node: { key: expect.any(String) } }, { node: { key: expect.any(String) } }] } },
      });
    });

    it('refuses 50 aliases of an expensive query, one of them with a negative page size', async () => {
      const result = await run(
        transport,
        `{ ${aliases(49, () => FLEET)} neg: phases(first: -2147483648) { edges { node { resources(first: 100) { edges { node { key } } } } } } }`,
      );
      expect(result.data).toBeUndefined();
      expect(result.errors?.length).toBeGreaterThan(0);
      expect(
        codes(result).every(
          (code) =>
            code === 'GRAPHQL_PARSE_FAILED' || code === 'GRAPHQL_VALIDATION_FAILED' || code === 'BAD_USER_INPUT',
        ),
      ).toBe(true);
    });
  });

  describe('document, aliases, tokens, directives and cost (#17 item 7)', () => {
    it('refuses fragments that spread the previous one twice (24 levels) at once, and /healthz answers meanwhile', async () => {
      const fragments = ['fragment F0 on Query { __typename }'];
      for (let i = 1; i <= 24; i++)
        fragments.push(`fragment F${i} on Query { ... on Query { ...F${i - 1} } ...F${i - 1} }`);
      const hostile = run(transport, `{ ...F24 } ${fragments.join(' ')}`);
      const health = await fetch(defaults.url.replace(/\/graphql$/, '/healthz'));
      expect(health.status).toBe(200);
      const result = await hostile;
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
      expect(limits(result)).toEqual(['cost']);
    });

    it('refuses more aliases than the limit (30), __typename included', async () => {
      const result = await run(transport, `{ ${aliases(31, () => '__typename')} }`);
      expect(result.data).toBeUndefined();
      expect(limits(result)).toEqual(['aliases']);
      expect((await run(transport, `{ ${aliases(30, () => '__typename')} }`)).errors).toBeUndefined();
    });

    it('refuses 50,000 __typename aliases before parsing them', async () => {
      const result = await run(transport, `{ ${aliases(50_000, () => '__typename')} }`);
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['GRAPHQL_PARSE_FAILED']);
    });

    it('refuses a document of more tokens than the limit (1,000) before parsing it', async () => {
      const result = await run(transport, `{ ${'__typename '.repeat(999)} }`);
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['GRAPHQL_PARSE_FAILED']);
      expect(result.errors?.[0]?.message).toContain('1000 tokens');
      // 2 braces and 249 times 4 tokens: 998.
      expect((await run(transport, `{ ${'about { version } '.repeat(249)} }`)).errors).toBeUndefined();
    });

    it('refuses a document longer than the limit (64 KiB) before parsing it', async () => {
      const result = await run(transport, `{ about { version } } # ${'x'.repeat(64 * 1024)}`);
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['GRAPHQL_PARSE_FAILED']);
    });

    it('refuses more directives than the limit (50)', async () => {
      const result = await run(transport, `{ ${'__typename @skip(if: false) '.repeat(51)} }`);
      expect(result.data).toBeUndefined();
      expect(limits(result)).toEqual(['directives']);
    });

    it('prices auditReport as computing over history: 11 in one query are over the cost limit', async () => {
      const result = await run(
        transport,
        `{ ${aliases(11, () => 'auditReport(from: "2026-01-01T00:00:00Z") { figures }')} }`,
      );
      expect(result.data).toBeUndefined();
      expect(limits(result)).toEqual(['cost']);
    });

    it('refuses 100 aliased auditReports (tokens), 60 (aliases and cost) and 1,000 aliased clusters', async () => {
      const reports = await run(
        transport,
        `{ ${aliases(100, () => 'auditReport(from: "2026-01-01T00:00:00Z") { content }')} }`,
      );
      expect(reports.data).toBeUndefined();
      expect(codes(reports)).toEqual(['GRAPHQL_PARSE_FAILED']);
      const sixty = await run(
        transport,
        `{ ${aliases(60, () => 'auditReport(from: "2026-01-01T00:00:00Z") { content }')} }`,
      );
      expect(sixty.data).toBeUndefined();
      expect(limits(sixty)).toEqual(expect.arrayContaining(['aliases', 'cost']));
      const clusters = await run(transport, `{ ${aliases(1_000, () => 'clusters { name labels }')} }`);
      expect(clusters.data).toBeUndefined();
      expect(codes(clusters)).toEqual(['GRAPHQL_PARSE_FAILED']);
    });
  });

  describe('introspection (#17 item 8)', () => {
    it('answers the standard introspection query, with every option, under the default limits', async () => {
      const query = getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
      });
      const result = await run(transport, query);
      expect(result.errors).toBeUndefined();
      const schema = (result.data as { __schema: { queryType: { name: string }; types: { name: string }[] } }).__schema;
      expect(schema.queryType.name).toBe('Query');
      expect(schema.types.map((t) => t.name)).toContain('Phase');
    });

    it("still refuses introspection lists nested past graphql-js' limit", async () => {
      const result = await run(
        transport,
        '{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }',
      );
      expect(result.data).toBeUndefined();
      expect(codes(result)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    });
  });
});

describe('GraphiQL docs (#17 item 8)', () => {
  it('serves the page, and its introspection request (as GraphiQL sends it) returns the schema', async () => {
    const page = await fetch(defaults.url, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    await page.text();
    const res = await fetch(defaults.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: getIntrospectionQuery({ inputValueDeprecation: true, schemaDescription: true }),
        operationName: 'IntrospectionQuery',
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data?: { __schema?: { types: unknown[] } }; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(body.data?.__schema?.types.length).toBeGreaterThan(10);
  });
});
