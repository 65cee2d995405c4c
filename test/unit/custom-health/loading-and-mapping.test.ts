import { describe, expect, it } from 'vitest';
import { healthConfigSchema } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, createLuaChecker, loadObject } from './helpers.ts';

describe('load-time errors name their source and never stop the other checks', () => {
  it('reports a Lua syntax error with its file and line; the other scripts load', async () => {
    const { checker, errors, dir, dispose } = await createCheckerFromTree(
      {
        'rc/s3.services.k8s.aws/Bucket/health.lua': 'local hs = {}\nif obj.status then\n  hs.status = \nend\nreturn hs',
        'rc/ConfigMap/health.lua': 'return { status = "Healthy" }',
      },
      { luaDirectories: ['rc'] },
    );
    try {
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        kind: 'LUA_SYNTAX_ERROR',
        source: `${dir}/rc/s3.services.k8s.aws/Bucket/health.lua`,
        line: 4,
      });
      expect(errors[0]?.message).toContain("unexpected symbol near 'end'");
      expect(checker.evaluate(loadObject('configMap'))?.status).toBe('Current');
      expect(checker.evaluate(loadObject('bucket'))).toBeUndefined();
    } finally {
      dispose();
    }
  });

  it.each([
    [
      'an unparsable CEL expression, by config path',
      {
        healthCheckExprs: [
          { apiVersion: 'kafka.strimzi.io/v1beta2', kind: 'Kafka', current: 'status.conditions.exists(c, ' },
        ],
      },
      { kind: 'CEL_PARSE_ERROR', source: 'health.healthCheckExprs[0].current' },
    ],
    [
      'a duplicate GroupKind, as Flux rejects',
      {
        healthCheckExprs: [
          { apiVersion: 'kafka.strimzi.io/v1beta2', kind: 'Kafka', current: 'true' },
          { apiVersion: 'kafka.strimzi.io/v1', kind: 'Kafka', current: 'false' },
        ],
      },
      { kind: 'DUPLICATE_CHECK', source: 'health.healthCheckExprs[1]' },
    ],
    ['a missing Lua directory', { luaDirectories: ['does-not-exist'] }, { kind: 'READ_FAILED' }],
    ['a missing argocd-cm file', { argocdConfigMap: 'nope.yaml' }, { kind: 'READ_FAILED' }],
  ])('reports %s', async (_name, health, expected) => {
    const { errors, dispose } = await createCheckerFromTree({}, health);
    try {
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject(expected);
    } finally {
      dispose();
    }
  });

  it('rejects a malformed health section with a readable zod error', () => {
    const parsed = healthConfigSchema.safeParse({
      healthCheckExprs: [{ kind: 'Kafka', current: '' }],
      luaDirectory: 'x',
    });
    expect(parsed.success).toBe(false);
    const paths = parsed.error?.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['healthCheckExprs.0.apiVersion', 'healthCheckExprs.0.current']));
    expect(parsed.error?.issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });

  it('fills sandbox defaults (1e6 instructions, 64 MiB, 1 s)', () => {
    expect(healthConfigSchema.parse({}).lua).toEqual({
      instructionLimit: 1_000_000,
      memoryLimitMiB: 64,
      timeoutMs: 1000,
    });
  });
});

describe('Argo CD health maps onto kstatus statuses and conditions', () => {
  it.each([
    ['Healthy', { status: 'Current', conditions: [] }],
    [
      'Progressing',
      {
        status: 'InProgress',
        conditions: [{ type: 'Reconciling', status: 'True', reason: 'Progressing', message: 'seen' }],
      },
    ],
    [
      'Degraded',
      { status: 'Failed', conditions: [{ type: 'Stalled', status: 'True', reason: 'Degraded', message: 'seen' }] },
    ],
    [
      'Suspended',
      {
        status: 'InProgress',
        reason: 'Suspended',
        conditions: [{ type: 'Reconciling', status: 'True', reason: 'Suspended', message: 'seen' }],
      },
    ],
    ['Missing', { status: 'NotFound', conditions: [] }],
    ['Unknown', { status: 'Unknown', conditions: [] }],
  ])('%s', async (health, expected) => {
    const { checker, dispose } = await createLuaChecker(
      'kafka.strimzi.io/Kafka',
      `return { status = "${health}", message = "seen" }`,
    );
    try {
      expect(checker.evaluate(loadObject('kafka'))).toEqual({
        message: 'seen',
        ...expected,
        customHealth: {
          engine: 'lua',
          source: expect.stringMatching(/kafka\.strimzi\.io\/Kafka\/health\.lua$/),
          health,
          message: 'seen',
        },
      });
    } finally {
      dispose();
    }
  });

  it('Flux CEL results carry the deciding expression and kstatus conditions', async () => {
    const { checker, dispose } = await createCheckerFromTree(
      {},
      {
        healthCheckExprs: [
          {
            apiVersion: 'kafka.strimzi.io/v1beta2',
            kind: 'Kafka',
            current: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
            failed: "status.conditions.exists(c, c.type == 'Ready' && c.status == 'False')",
          },
        ],
      },
    );
    try {
      const kafka = loadObject('kafka');
      expect(checker.evaluate(kafka)).toEqual({
        status: 'Current',
        message: '',
        conditions: [],
        customHealth: { engine: 'cel', source: 'health.healthCheckExprs[0]', health: 'current', message: '' },
      });
      const broken = {
        ...kafka,
        status: { ...(kafka.status as object), conditions: [{ type: 'Ready', status: 'False' }] },
      };
      expect(checker.evaluate(broken)).toMatchObject({
        status: 'Failed',
        conditions: [{ type: 'Stalled', status: 'True', reason: 'failed', message: '' }],
      });
    } finally {
      dispose();
    }
  });
});
