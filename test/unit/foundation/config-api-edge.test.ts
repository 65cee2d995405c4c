import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { dirWith, issuesOf } from '../../helpers/config.ts';

describe('api edge configuration', () => {
  it('has no extra origins, names or WebSocket settings by default', () => {
    const { api } = loadConfig({}, dirWith());
    expect(api.allowedOrigins).toBeUndefined();
    expect(api.allowedHosts).toBeUndefined();
    expect(api.webSocket).toBeUndefined();
  });

  it('reads allowed origins and host names as comma-separated environment values', () => {
    const { api } = loadConfig(
      {
        PHASELOG_ALLOWED_ORIGINS: 'https://dash.example.com, http://localhost:3000',
        PHASELOG_ALLOWED_HOSTS: 'phaselog.internal,[::1]',
      },
      dirWith(),
    );
    expect(api.allowedOrigins).toEqual(['https://dash.example.com', 'http://localhost:3000']);
    expect(api.allowedHosts).toEqual(['phaselog.internal', '[::1]']);
  });

  it('reads them and the WebSocket limits from phaselog.yaml', () => {
    const { api } = loadConfig(
      {},
      dirWith(
        'api:\n  allowedOrigins: [https://dash.example.com]\n  webSocket:\n    maxMessageBytes: 65536\n    maxConnectionsPerIp: 10\n    connectionInitTimeout: 5s\n',
      ),
    );
    expect(api.allowedOrigins).toEqual(['https://dash.example.com']);
    expect(api.webSocket).toEqual({ maxMessageBytes: 65536, maxConnectionsPerIp: 10, connectionInitTimeout: 5000 });
  });

  it.each([
    [
      'an origin with a path',
      { PHASELOG_ALLOWED_ORIGINS: 'https://dash.example.com/app' },
      'PHASELOG_ALLOWED_ORIGINS (api.allowedOrigins)',
    ],
    ['a wildcard origin', { PHASELOG_ALLOWED_ORIGINS: '*' }, 'PHASELOG_ALLOWED_ORIGINS (api.allowedOrigins)'],
    [
      'a host name with a port',
      { PHASELOG_ALLOWED_HOSTS: 'ok.example,phaselog.internal:4000' },
      'PHASELOG_ALLOWED_HOSTS (api.allowedHosts)',
    ],
  ])('refuses %s, naming the key', (_label, env, key) => {
    const issues = issuesOf(() => loadConfig(env, dirWith()));
    expect(issues).toEqual([{ key, message: expect.stringMatching(/^".+" is not /) }]);
  });

  it('refuses WebSocket limits that are not positive numbers, and unknown ones', () => {
    const issues = issuesOf(() =>
      loadConfig({}, dirWith('api:\n  webSocket:\n    maxConnectionsPerIp: 0\n    maxSockets: 3\n')),
    );
    expect(issues.map((i) => i.key).sort()).toEqual(['api.webSocket.maxConnectionsPerIp', 'api.webSocket.maxSockets']);
  });
});
