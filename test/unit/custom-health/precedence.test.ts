import { describe, expect, it } from 'vitest';
import { createHealthChecker, healthConfigSchema, loadArgoCdConfigMap } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, loadObject } from './helpers.ts';

const say = (who: string) => `return { status = "Healthy", message = "${who}" }`;

const argoCm = (data: Record<string, string>) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n${Object.entries(data)
    .map(
      ([k, v]) =>
        `  ${k}: |\n${v
          .split('\n')
          .map((line) => `    ${line}`)
          .join('\n')}`,
    )
    .join('\n')}\n`;

interface Row {
  name: string;
  files: Record<string, string>;
  health: Record<string, unknown>;
  object: string;
  apiVersion?: string;
  message: string;
}

const rows: Row[] = [
  {
    name: 'a wildcard group folder (_.services.k8s.aws/_) matches every ACK kind',
    files: { 'rc/_.services.k8s.aws/_/health.lua': say('wildcard') },
    health: { luaDirectories: ['rc'] },
    object: 'bucket',
    message: 'wildcard',
  },
  {
    name: 'an exact folder beats a wildcard folder',
    files: {
      'rc/_.services.k8s.aws/_/health.lua': say('wildcard'),
      'rc/s3.services.k8s.aws/Bucket/health.lua': say('exact'),
    },
    health: { luaDirectories: ['rc'] },
    object: 'bucket',
    message: 'exact',
  },
  {
    name: 'the more specific wildcard folder wins',
    files: {
      'rc/_.k8s.aws/_/health.lua': say('broad'),
      'rc/_.services.k8s.aws/_/health.lua': say('narrow'),
      'rc/_/_/health.lua': say('everything'),
    },
    health: { luaDirectories: ['rc'] },
    object: 'bucket',
    message: 'narrow',
  },
  {
    name: 'a core kind lives in a top-level <Kind> folder',
    files: { 'rc/ConfigMap/health.lua': say('core') },
    health: { luaDirectories: ['rc'] },
    object: 'configMap',
    message: 'core',
  },
  {
    name: 'the first listed directory wins for the same kind',
    files: {
      'mine/s3.services.k8s.aws/Bucket/health.lua': say('mine'),
      'argo/s3.services.k8s.aws/Bucket/health.lua': say('argo'),
    },
    health: { luaDirectories: ['mine', 'argo'] },
    object: 'bucket',
    message: 'mine',
  },
  {
    name: 'an argocd-cm health key beats a folder script',
    files: {
      'rc/s3.services.k8s.aws/Bucket/health.lua': say('folder'),
      'argocd-cm.yaml': argoCm({ 'resource.customizations.health.s3.services.k8s.aws_Bucket': say('configmap') }),
    },
    health: { luaDirectories: ['rc'], argocdConfigMap: 'argocd-cm.yaml' },
    object: 'bucket',
    message: 'configmap',
  },
  {
    name: 'an argocd-cm wildcard key beats an exact folder, as in Argo CD',
    files: {
      'rc/s3.services.k8s.aws/Bucket/health.lua': say('folder'),
      'argocd-cm.yaml': argoCm({ 'resource.customizations.health.*.k8s.aws_*': say('cm wildcard') }),
    },
    health: { luaDirectories: ['rc'], argocdConfigMap: 'argocd-cm.yaml' },
    object: 'bucket',
    message: 'cm wildcard',
  },
  {
    name: 'an exact argocd-cm key beats an argocd-cm wildcard key',
    files: {
      'argocd-cm.yaml': argoCm({
        'resource.customizations.health.all': say('all'),
        'resource.customizations.health.ConfigMap': say('exact core'),
      }),
    },
    health: { argocdConfigMap: 'argocd-cm.yaml' },
    object: 'configMap',
    message: 'exact core',
  },
  {
    name: 'the argocd-cm "all" key applies to every kind',
    files: { 'argocd-cm.yaml': argoCm({ 'resource.customizations.health.all': say('all') }) },
    health: { argocdConfigMap: 'argocd-cm.yaml' },
    object: 'bucket',
    message: 'all',
  },
  {
    name: 'the resource.customizations YAML block is read, and a split key overrides it',
    files: {
      'argocd-cm.yaml': argoCm({
        'resource.customizations': `s3.services.k8s.aws/Bucket:\n  health.lua: |\n    return { status = "Healthy", message = "block" }\nConfigMap:\n  health.lua: |\n    return { status = "Healthy", message = "block core" }`,
        'resource.customizations.health.s3.services.k8s.aws_Bucket': say('split key'),
      }),
    },
    health: { argocdConfigMap: 'argocd-cm.yaml' },
    object: 'bucket',
    message: 'split key',
  },
  {
    name: 'an argocd-cm file may hold only the data map',
    files: { 'cm-data.yaml': `resource.customizations.health.ConfigMap: |\n  ${say('data only')}\n` },
    health: { argocdConfigMap: 'cm-data.yaml' },
    object: 'configMap',
    message: 'data only',
  },
  {
    name: 'a CEL check declared in phaselog.yaml beats a Lua script for the same kind',
    files: { 'rc/s3.services.k8s.aws/Bucket/health.lua': say('lua') },
    health: {
      luaDirectories: ['rc'],
      healthCheckExprs: [{ apiVersion: 's3.services.k8s.aws/v1alpha1', kind: 'Bucket', current: 'true' }],
    },
    object: 'bucket',
    message: '',
  },
];

describe('which custom check applies', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const { checker, errors, dispose } = await createCheckerFromTree(row.files, row.health);
    try {
      expect(errors).toEqual([]);
      const result = checker.evaluate(loadObject(row.object));
      expect(result?.message).toBe(row.message);
    } finally {
      dispose();
    }
  });

  it('a kind-specific CEL check beats the group-wide one, and the group-wide one covers other kinds', async () => {
    const { checker, dispose } = await createCheckerFromTree(
      {},
      {
        healthCheckExprs: [
          { apiVersion: 's3.services.k8s.aws/v1alpha1', current: 'false', failed: 'true' },
          { apiVersion: 's3.services.k8s.aws/v1', kind: 'Bucket', current: 'true' },
        ],
      },
    );
    try {
      expect(checker.evaluate(loadObject('bucket'))?.status).toBe('Current');
      expect(checker.evaluate({ ...loadObject('bucket'), kind: 'Queue' })?.status).toBe('Failed');
      expect(checker.matches('s3.services.k8s.aws/v1beta1', 'Anything')).toBe(true);
      expect(checker.matches('apps/v1', 'Deployment')).toBe(false);
    } finally {
      dispose();
    }
  });

  it.each([
    ['no check matches the kind', { ...loadObject('configMap') }],
    ['the object has no kind', { apiVersion: 'v1', metadata: { name: 'x' } }],
    ['apiVersion is not a string', { apiVersion: 1, kind: 'ConfigMap' }],
  ])('returns undefined when %s, so kstatus rules apply', async (_why, object) => {
    const { checker, dispose } = await createCheckerFromTree(
      { 'rc/s3.services.k8s.aws/Bucket/health.lua': say('x') },
      { luaDirectories: ['rc'] },
    );
    try {
      expect(checker.evaluate(object as Record<string, unknown>)).toBeUndefined();
    } finally {
      dispose();
    }
  });

  it('accepts argocd-cm data read from a cluster through loadArgoCdConfigMap', async () => {
    const fromCluster = loadArgoCdConfigMap({
      'resource.customizations.health.s3.services.k8s.aws_Bucket': say('from cluster'),
      url: 'https://argocd.example.com',
    });
    const { checker } = await createHealthChecker(healthConfigSchema.parse({}), {
      baseDir: '.',
      argocdConfigMaps: [fromCluster],
    });
    try {
      expect(checker.evaluate(loadObject('bucket'))?.message).toBe('from cluster');
    } finally {
      checker.close();
    }
  });
});

describe('argocd-cm parsing', () => {
  it('reads split keys, the YAML block and useOpenLibs like Argo CD settings', () => {
    const { overrides, errors } = loadArgoCdConfigMap({
      'resource.customizations': 'apps.example.com/Widget:\n  health.lua: return {}\n  health.lua.useOpenLibs: true\n',
      'resource.customizations.health.cert-manager.io_Certificate': 'return {}',
      'resource.customizations.useOpenLibs.cert-manager.io_Certificate': 'true',
      'resource.customizations.health.Service': 'return {}',
      'resource.customizations.ignoreDifferences.apps_Deployment': 'jsonPointers: [/spec/replicas]',
      'resource.customizations.health.a_b_c': 'return {}',
      'resource.customizations.useOpenLibs.Service': 'maybe',
    });
    expect(overrides.map((o) => [o.key, o.useOpenLibs]).sort()).toEqual([
      ['Service', false],
      ['apps.example.com/Widget', true],
      ['cert-manager.io/Certificate', true],
    ]);
    expect(errors.map((e) => [e.kind, e.source])).toEqual([
      ['INVALID_ARGOCD_CONFIG', 'resource.customizations.health.a_b_c'],
      ['INVALID_ARGOCD_CONFIG', 'resource.customizations.useOpenLibs.Service'],
    ]);
  });

  it.each([
    [
      'without useOpenLibs, the string library is absent as in Argo CD',
      'string.format("%s %s", obj.kind, obj.metadata.name)',
      'false',
      { status: 'Unknown', reason: 'HEALTH_CHECK_ERROR' },
    ],
    [
      'without useOpenLibs, strings have no methods either',
      'obj.kind:lower()',
      'false',
      { status: 'Unknown', message: expect.stringContaining("method 'lower'") },
    ],
    [
      'with useOpenLibs, string.format works',
      'string.format("%s %s", obj.kind, obj.metadata.name)',
      'true',
      { status: 'Current', message: 'Bucket assets' },
    ],
    ['with useOpenLibs, string methods work', 'obj.kind:lower()', 'true', { status: 'Current', message: 'bucket' }],
  ])('%s', async (_name, expression, openLibs, expected) => {
    const fromCluster = loadArgoCdConfigMap({
      'resource.customizations.health.s3.services.k8s.aws_Bucket': `return { status = "Healthy", message = ${expression} }`,
      'resource.customizations.useOpenLibs.s3.services.k8s.aws_Bucket': openLibs,
    });
    const { checker } = await createHealthChecker(healthConfigSchema.parse({}), {
      baseDir: '.',
      argocdConfigMaps: [fromCluster],
    });
    try {
      expect(checker.evaluate(loadObject('bucket'))).toMatchObject(expected);
    } finally {
      checker.close();
    }
  });
});
