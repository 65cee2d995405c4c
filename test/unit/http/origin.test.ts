import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createMetricsGuard, createRequestGuard, normalizeOrigin } from '../../../src/http/origin.ts';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('createRequestGuard', () => {
  const loopback = createRequestGuard({
    loopbackBind: true,
    allowedHosts: ['phaselog.internal'],
    allowedOrigins: ['https://dash.example.com'],
  });
  const network = createRequestGuard({ loopbackBind: false });
  const networkWithNames = createRequestGuard({ loopbackBind: false, allowedHosts: ['phaselog.example.com'] });

  it.each([
    ['a program on loopback (no Origin)', loopback, { host: '127.0.0.1:4000' }],
    ['a request without Host (HTTP/1.0)', loopback, {}],
    ['localhost with a trailing dot', loopback, { host: 'localhost.:4000' }],
    ['[::1]', loopback, { host: '[::1]:4000' }],
    ['a configured name', loopback, { host: 'PhaseLog.Internal' }],
    ['a same-origin page', loopback, { host: 'localhost:4000', origin: 'http://localhost:4000' }],
    ['a same-origin page behind a TLS proxy', loopback, { host: 'localhost:4000', origin: 'https://localhost:4000' }],
    ['a listed origin', loopback, { host: 'localhost:4000', origin: 'https://dash.example.com' }],
    [
      'a listed origin written with its default port',
      loopback,
      { host: 'localhost:4000', origin: 'https://dash.example.com:443' },
    ],
    ['any Host on a network bind without names (kubelet, pod address)', network, { host: '10.0.0.7:4000' }],
    ['a configured name on a network bind', networkWithNames, { host: 'phaselog.example.com' }],
  ])('lets through %s', (_label, guard, headers) => {
    expect(guard(request(headers))).toBeUndefined();
  });

  it.each([
    ['a rebound name', loopback, { host: 'evil.example:4000' }, 421, 'HOST_NOT_ALLOWED'],
    [
      'a rebound name with a matching Origin',
      loopback,
      { host: 'evil.example:4000', origin: 'http://evil.example:4000' },
      421,
      'HOST_NOT_ALLOWED',
    ],
    ['a Host that is not a host', loopback, { host: 'a b/c' }, 421, 'HOST_NOT_ALLOWED'],
    ['a Host with userinfo', loopback, { host: 'localhost@evil.example' }, 421, 'HOST_NOT_ALLOWED'],
    [
      'an unlisted name on a network bind with names',
      networkWithNames,
      { host: '10.0.0.7:4000' },
      421,
      'HOST_NOT_ALLOWED',
    ],
    ['another site', loopback, { host: 'localhost:4000', origin: 'http://evil.example' }, 403, 'ORIGIN_NOT_ALLOWED'],
    [
      'another site on a network bind',
      network,
      { host: '10.0.0.7:4000', origin: 'http://evil.example' },
      403,
      'ORIGIN_NOT_ALLOWED',
    ],
    ['a sandboxed page', loopback, { host: 'localhost:4000', origin: 'null' }, 403, 'ORIGIN_NOT_ALLOWED'],
    [
      'another port of the same host',
      loopback,
      { host: 'localhost:4000', origin: 'http://localhost:8080' },
      403,
      'ORIGIN_NOT_ALLOWED',
    ],
    [
      'another name of the same machine',
      loopback,
      { host: 'localhost:4000', origin: 'http://127.0.0.1:4000' },
      403,
      'ORIGIN_NOT_ALLOWED',
    ],
    [
      'a non-http origin',
      loopback,
      { host: 'localhost:4000', origin: 'chrome-extension://abc' },
      403,
      'ORIGIN_NOT_ALLOWED',
    ],
  ])('refuses %s', (_label, guard, headers, status, code) => {
    expect(guard(request(headers))).toMatchObject({ status, code, message: expect.any(String) });
  });
});

describe('normalizeOrigin', () => {
  it.each([
    ['https://Dash.Example.com', 'https://dash.example.com'],
    ['https://dash.example.com/', 'https://dash.example.com'],
    ['http://localhost:80', 'http://localhost'],
    ['http://[::1]:4000', 'http://[::1]:4000'],
  ])('%s is %s', (value, expected) => {
    expect(normalizeOrigin(value)).toBe(expected);
  });

  it.each([
    'dash.example.com',
    'https://dash.example.com/app',
    'https://u:p@dash.example.com',
    'ftp://dash.example.com',
    'null',
    '*',
  ])('%s is not an origin', (value) => {
    expect(normalizeOrigin(value)).toBeUndefined();
  });
});

describe('createMetricsGuard (the Host rule of /metrics)', () => {
  const loopback = createMetricsGuard('127.0.0.1');
  const named = createMetricsGuard('0.0.0.0', ['phaselog-api.phaselog.svc']);
  const open = createMetricsGuard('0.0.0.0');

  it.each([
    ['a loopback scrape', loopback, '127.0.0.1:4000', true],
    ['localhost', loopback, 'localhost:4000', true],
    ['a pod address (IPv4)', named, '10.1.2.3:4000', true],
    ['a pod address (IPv6)', named, '[fd00::7]:4000', true],
    ['the Service name', named, 'phaselog-api.phaselog.svc:4000', true],
    ['any Host on a network bind without names', open, 'anything.example', true],
    ['a rebound name', loopback, 'attacker.example:4000', false],
    ['a name made to look like an address', loopback, '127.0.0.1.nip.io:4000', false],
    ['a name on a bind with names', named, 'attacker.example:4000', false],
    ['userinfo in Host', loopback, 'x@127.0.0.1:4000', false],
  ])('%s', (_label, guard, host, passes) => {
    const refusal = guard(request({ host }));
    expect(refusal === undefined).toBe(passes);
    if (!passes) expect(refusal).toMatchObject({ status: 421, code: 'HOST_NOT_ALLOWED' });
  });
});
