/**
 * The demo's emulated service health endpoints: one local HTTP server that answers
 * `/<cluster>/<namespace>/<name>/healthz` for every demo phase. Staging's `api` phase turns
 * unhealthy (503) for one period out of two, so the demo's `health` check shows a condition
 * changing within two minutes of `npm start`; every other phase stays healthy.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkSchema, type CheckConfig } from '../checks/config.ts';

export interface DemoHealthEndpoint {
  /** The demo's http check (no file or secret needed). */
  check: CheckConfig;
  close(): Promise<void>;
}

/** Whether the flipping endpoint is unhealthy at `now`: the second half of each period. */
export function isFlippedDown(now: number, periodMs: number): boolean {
  return Math.floor(now / (periodMs / 2)) % 2 === 1;
}

/** Starts the endpoint on a free loopback port. @param periodMs healthy, then unhealthy, each half of it */
export async function startDemoHealthEndpoint(periodMs = 120_000): Promise<DemoHealthEndpoint> {
  const server = createServer((req, res) => {
    const [cluster, namespace, name] = (req.url ?? '').split('/').slice(1, 4);
    const down =
      cluster === 'demo-staging' && namespace === 'shop' && name === 'api' && isFlippedDown(Date.now(), periodMs);
    res
      .writeHead(down ? 503 : 200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: down ? 'down' : 'ok' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const check = checkSchema.parse({
    name: 'health',
    interval: '10s',
    timeout: '2s',
    select: { namespaces: ['shop'] },
    http: {
      url: `http://127.0.0.1:${port}/{{ cluster }}/{{ namespace }}/{{ name }}/healthz`,
      jsonPath: '$.status',
      equals: 'ok',
    },
  });
  return {
    check,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
