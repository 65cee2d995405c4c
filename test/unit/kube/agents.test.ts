import type https from 'node:https';
import { describe, expect, it } from 'vitest';
import { createSelfSignedCert } from '../../../src/emulator/tls.ts';
import { createClusterAgent } from '../../../src/kube/agents.ts';

function contextOf(agent: unknown): unknown {
  return (agent as https.Agent).options.secureContext;
}

describe('cluster agents', () => {
  it('agents given the same CA share one TLS secure context; another CA gets its own', async () => {
    const [one, two] = await Promise.all([createSelfSignedCert('127.0.0.1'), createSelfSignedCert('127.0.0.1')]);
    const a = createClusterAgent({ isHttps: true, tls: { ca: one.certPem }, keepAlive: true });
    const b = createClusterAgent({ isHttps: true, tls: { ca: one.certPem, servername: 'other' }, keepAlive: false });
    const c = createClusterAgent({ isHttps: true, tls: { ca: two.certPem }, keepAlive: true });
    expect(contextOf(a)).toBeDefined();
    expect(contextOf(b)).toBe(contextOf(a));
    expect(contextOf(c)).not.toBe(contextOf(a));
    for (const agent of [a, b, c]) agent.destroy();
  });

  it('TLS material that cannot be parsed is refused when the agent is made', () => {
    expect(() =>
      createClusterAgent({
        isHttps: true,
        tls: { ca: 'not a certificate', cert: 'nor this', key: 'nor a key' },
        keepAlive: true,
      }),
    ).toThrow();
  });

  it('keeps at most the idle sockets asked for', () => {
    const agent = createClusterAgent({ isHttps: false, tls: {}, keepAlive: true, maxFreeSockets: 1 });
    expect(agent.maxFreeSockets).toBe(1);
    agent.destroy();
  });
});
