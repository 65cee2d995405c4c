import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ENV_KEYS, loadConfig } from '../../../src/config.ts';
import { PROJECT_ROOT } from '../../../src/runtime/paths.ts';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  restart?: string;
}

const compose = parse(readFileSync(path.join(PROJECT_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const phaselogServices = ['api', 'worker'] as const;

describe('docker-compose.yml', () => {
  it('runs postgres, redis, the api and the worker', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis', 'worker']);
  });

  it('runs the api and the worker from the same image with different commands', () => {
    const [api, worker] = phaselogServices.map((name) => compose.services[name] as Service);
    expect(api?.image).toBeDefined();
    expect(api?.image).toBe(worker?.image);
    expect(api?.command).toEqual(['api']);
    expect(worker?.command).toEqual(['worker']);
  });

  it.each(phaselogServices)('sets only environment variables phaselog reads (%s)', (name) => {
    const env = compose.services[name]?.environment ?? {};
    expect(Object.keys(env).length).toBeGreaterThan(0);
    for (const key of Object.keys(env)) expect(Object.keys(ENV_KEYS)).toContain(key);
  });

  it.each(phaselogServices)('gives phaselog a valid configuration (%s)', (name) => {
    const env = compose.services[name]?.environment ?? {};
    const config = loadConfig(env, '/nonexistent-dir-without-phaselog-yaml');
    expect(config.database.url).toMatch(/@postgres:5432\//);
    expect(config.redis.url).toBe('redis://redis:6379');
  });

  it('binds the api to all interfaces inside its container, publishes its port, and requires tokens there', () => {
    const api = compose.services.api as Service & { ports?: string[] };
    expect(api.environment?.PHASELOG_HOST).toBe('0.0.0.0');
    // A non-loopback bind without an explicit anonymousRead refuses to start while no token exists.
    expect(loadConfig(api.environment ?? {}, '/nonexistent-dir-without-phaselog-yaml').api.anonymousRead).toBe(false);
    expect(api.ports).toContain(`${api.environment?.PHASELOG_PORT}:${api.environment?.PHASELOG_PORT}`);
  });

  it('health-checks every service and keeps Postgres data in a volume', () => {
    for (const service of ['postgres', 'redis', 'api'])
      expect(compose.services[service]?.healthcheck?.test.length).toBeGreaterThan(0);
    expect(compose.services.api?.healthcheck?.test.join(' ')).toContain('/readyz');
    expect(compose.services.postgres?.volumes?.[0]).toMatch(/^pgdata:/);
    expect(compose.volumes).toHaveProperty('pgdata');
  });

  it('restarts every service unless it was stopped', () => {
    for (const [name, service] of Object.entries(compose.services))
      expect([name, service.restart]).toEqual([name, 'unless-stopped']);
  });

  it('health-checks the worker on the probe listener it is configured to open', () => {
    const worker = compose.services.worker as Service;
    const port = worker.environment?.PHASELOG_PROBE_PORT;
    expect(port).toMatch(/^\d+$/);
    expect(worker.healthcheck?.test.join(' ')).toContain(`127.0.0.1:${port}/readyz`);
  });
});
