import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeStatus } from '../../../src/status/compute.ts';
import type { HealthChecker } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, loadObject } from './helpers.ts';

/** The checker plugged into the status engine the way workers wire it. */
describe('custom health through computeStatus', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const created = await createCheckerFromTree(
      {
        'rc/kafka.strimzi.io/Kafka/health.lua': `if obj.status.readyReplicas < obj.spec.kafka.replicas then
  return { status = "Progressing", message = obj.status.readyReplicas .. "/" .. obj.spec.kafka.replicas .. " brokers" }
end
return { status = "Healthy", message = "all brokers ready" }`,
      },
      { luaDirectories: ['rc'] },
    );
    checker = created.checker;
    dispose = created.dispose;
  });
  afterAll(() => dispose());

  it.each([
    ['a Kafka with every broker ready is Current by the Lua script', {}, 'Current', 'all brokers ready'],
    [
      'a Kafka missing a broker is InProgress with the script message',
      { readyReplicas: 2 },
      'InProgress',
      '2/3 brokers',
    ],
  ])('%s', (_name, statusPatch, status, message) => {
    const kafka = loadObject('kafka');
    const object = { ...kafka, status: { ...(kafka.status as object), ...statusPatch } };
    const result = computeStatus(object, { now: Date.parse('2026-11-22T00:00:00Z'), customHealth: checker.evaluate });
    expect(result).toMatchObject({ status, message, customHealth: { engine: 'lua' } });
  });

  it('a deleting object is Terminating before any custom check runs', () => {
    const kafka = loadObject('kafka');
    const deleting = {
      ...kafka,
      metadata: { ...(kafka.metadata as object), deletionTimestamp: '2026-11-21T00:00:00Z' },
    };
    const result = computeStatus(deleting, { now: Date.parse('2026-11-22T00:00:00Z'), customHealth: checker.evaluate });
    expect(result.status).toBe('Terminating');
    expect(result.customHealth).toBeUndefined();
  });

  it('kinds without a custom check keep the built-in kstatus rules', () => {
    const result = computeStatus(loadObject('configMap'), {
      now: Date.parse('2026-11-22T00:00:00Z'),
      customHealth: checker.evaluate,
    });
    expect(result.status).toBe('Current');
    expect(result.customHealth).toBeUndefined();
  });
});
