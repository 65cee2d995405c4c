import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthChecker } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, loadObject } from './helpers.ts';

/** Objects no cluster sends, but a caller might build by hand: the checker answers, never throws. */
describe('hand-built objects never crash or stall the checker', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const created = await createCheckerFromTree(
      {
        'rc/kafka.strimzi.io/Kafka/health.lua':
          'return { status = "Healthy", message = tostring(obj.status.self == nil) .. " " .. obj.status.readyReplicas }',
      },
      {
        luaDirectories: ['rc'],
        healthCheckExprs: [
          {
            apiVersion: 'cert-manager.io/v1',
            kind: 'Certificate',
            current: "status.conditions.exists(c, c.type == 'Ready')",
          },
        ],
      },
    );
    checker = created.checker;
    dispose = created.dispose;
  });
  afterAll(() => dispose());

  function withCycle(name: string): Record<string, unknown> {
    const object = loadObject(name);
    const status = object.status as Record<string, unknown>;
    status.self = status;
    status.again = status;
    return object;
  }

  it.each([
    ['Lua', 'kafka', { status: 'Current', message: 'true 3' }],
    ['CEL', 'certificateWithNulls', { status: 'Current' }],
  ])('a cyclic object evaluates with %s (the cycle reads as null)', (_engine, name, expected) => {
    expect(checker.evaluate(withCycle(name))).toMatchObject(expected);
  });

  it.each([
    ['Lua', 'kafka'],
    ['CEL', 'certificateWithNulls'],
  ])('a throwing getter gives Unknown with %s, and the next evaluation works', (_engine, name) => {
    const object = loadObject(name);
    Object.defineProperty(object.status as object, 'conditions', {
      enumerable: true,
      get() {
        throw new Error('getter exploded');
      },
    });
    expect(checker.evaluate(object)).toMatchObject({ status: 'Unknown', reason: 'HEALTH_CHECK_ERROR' });
    expect(checker.evaluate(loadObject(name))?.status).toBe('Current');
  });
});
