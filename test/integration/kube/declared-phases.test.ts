/**
 * Phases declared in phaselog.yaml: a list of resources and a label selector over some kinds,
 * observed against the emulator beside the phases found from inventory objects.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { groupDeclaredPhases } from '../../../src/declared-phases.ts';
import { readyDeployment, service, namespaceObject } from '../../../src/demo/objects.ts';
import { startEmulator } from '../../../src/emulator/index.ts';
import type { Emulator } from '../../../src/emulator/index.ts';
import { loadKubeconfigClusters } from '../../../src/kube/clusters.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import type { ClusterClient } from '../../../src/kube/cluster-client.ts';
import { formatLabelSelector } from '../../../src/kube/select-phase.ts';
import { observeCluster } from '../../../src/snapshot/observe.ts';

const YAML = `
phases:
  - cluster: test
    name: checkout-stack
    namespace: shop
    resources:
      - shop_checkout_apps_Deployment
      - { kind: Service, namespace: shop, name: checkout }
      - { group: apps, kind: Deployment, namespace: shop, name: not-deployed-yet }
  - cluster: test
    name: web-tier
    selector: { matchLabels: { tier: web }, matchExpressions: [{ key: legacy, operator: DoesNotExist }] }
    kinds: [apps/Deployment, Service]
    namespaces: [shop]
`;

function configFrom(yaml: string) {
  const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-declared-'));
  writeFileSync(path.join(dir, 'phaselog.yaml'), yaml);
  return loadConfig({}, dir);
}

function labelled<T extends object>(object: T, labels: Record<string, string>): T {
  const o = object as T & { metadata: { labels?: Record<string, string> } };
  return { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...labels } } };
}

let em: Emulator;
let client: ClusterClient;

beforeAll(async () => {
  em = await startEmulator({ port: 0 });
  em.apply([
    namespaceObject('shop'),
    readyDeployment('shop', 'checkout'),
    service('shop', 'checkout'),
    labelled(readyDeployment('shop', 'frontend'), { tier: 'web' }),
    labelled(service('shop', 'frontend'), { tier: 'web' }),
    labelled(readyDeployment('shop', 'old-frontend'), { tier: 'web', legacy: 'true' }),
  ]);
  const handle = loadKubeconfigClusters({ yaml: em.kubeconfig(), name: 'test' }).clusters[0];
  if (!handle) throw new Error('no cluster');
  client = createClusterClient(handle);
});

afterAll(async () => {
  client?.close();
  await em?.close();
});

describe('declared phases', () => {
  it('formats selectors the way the API server reads them', () => {
    expect(
      formatLabelSelector({
        matchLabels: { tier: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['a', 'b'] },
          { key: 'legacy', operator: 'DoesNotExist' },
          { key: 'x', operator: 'Exists' },
          { key: 'y', operator: 'NotIn', values: ['z'] },
        ],
      }),
    ).toBe('tier=web,env in (a,b),!legacy,x,y notin (z)');
  });

  it('observes a list phase and a selector phase beside discovered ones', async () => {
    const declared = groupDeclaredPhases(configFrom(YAML).phases);
    const observation = await observeCluster(client, { declared });
    if (observation.outcome !== 'ok') throw new Error('cluster unreachable');
    const byName = new Map(observation.phases.map((p) => [p.identity.name, p]));

    const list = byName.get('checkout-stack');
    expect(list?.identity).toEqual({ sourceKind: 'config', namespace: 'shop', name: 'checkout-stack' });
    expect(list?.resources.map((r) => [r.key, r.status])).toEqual([
      ['/Service/shop/checkout', 'Current'],
      ['apps/Deployment/shop/checkout', 'Current'],
      ['apps/Deployment/shop/not-deployed-yet', 'NotFound'],
    ]);
    expect(list?.status.status).toBe('InProgress');

    const selector = byName.get('web-tier');
    expect(selector?.identity.sourceKind).toBe('selector');
    expect(selector?.resources.map((r) => r.key)).toEqual(['/Service/shop/frontend', 'apps/Deployment/shop/frontend']);
    expect(selector?.manifest.source).toMatchObject({
      kind: 'SelectorPhase',
      spec: {
        kinds: [
          { group: 'apps', kind: 'Deployment' },
          { group: '', kind: 'Service' },
        ],
      },
    });
  });

  it('follows the selector: an object that gains the label joins the phase and its manifest changes', async () => {
    const declared = groupDeclaredPhases(configFrom(YAML).phases);
    const before = await observeCluster(client, { declared });
    em.apply(labelled(readyDeployment('shop', 'checkout'), { tier: 'web' }));
    const after = await observeCluster(client, { declared });
    if (before.outcome !== 'ok' || after.outcome !== 'ok') throw new Error('cluster unreachable');
    const web = (o: typeof after) => o.phases.find((p) => p.identity.name === 'web-tier');
    expect(web(after)?.resources.map((r) => r.key)).toContain('apps/Deployment/shop/checkout');
    expect(web(after)?.manifest.hash).not.toBe(web(before)?.manifest.hash);
  });

  it.each([
    ['neither resources nor selector', 'phases:\n  - cluster: test\n    name: empty\n', /set either resources/],
    ['a malformed resource id', 'phases:\n  - cluster: test\n    name: bad\n    resources: [not-an-id]\n', /not-an-id/],
    [
      'a selector without kinds',
      'phases:\n  - cluster: test\n    name: s\n    selector: { matchLabels: { a: b } }\n',
      /kinds must be a non-empty list/,
    ],
    [
      'the same phase twice',
      'phases:\n  - { cluster: test, name: a, resources: [] }\n  - { cluster: test, name: a, resources: [] }\n',
      /declared twice/,
    ],
  ])('rejects %s with the key named', (_what, yaml, message) => {
    try {
      configFrom(yaml);
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const issue = (error as ConfigError).issues[0];
      expect(issue?.key).toMatch(/^phases\.\d/);
      expect(issue?.message).toMatch(message);
    }
  });
});
