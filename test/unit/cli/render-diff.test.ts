/** `manifest --diff` text: headers, one ref format, markers that do not rely on colour, colour only when asked. */
import { describe, expect, it } from 'vitest';
import {
  formatRef,
  renderChange,
  renderManifestDiff,
  type DiffChange,
  type DiffVersion,
} from '../../../src/cli/render-diff.ts';
import { hashRedacted } from '../../../src/history/redact.ts';
import { renderRevisionYaml, unifiedDiff } from '../../../src/history/revision-diff.ts';

const ESC = '\u001b[';

function deployment(image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: image,
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"secret":"copy"}' },
    },
    spec: { replicas: 2, template: { spec: { containers: [{ name: 'app', image }] } } },
    status: { readyReplicas: 2 },
  };
}

/** A change as the API gives it: the diff of two objects redacted as the store keeps them. */
function changed(key: string, before: Record<string, unknown>, after: Record<string, unknown>): DiffChange {
  const [b, a] = [hashRedacted(before), hashRedacted(after)];
  const diff = unifiedDiff(
    { text: renderRevisionYaml(b.body), label: `${b.hash.slice(0, 12)}, 2026-11-26T10:00:00.000Z` },
    { text: renderRevisionYaml(a.body), label: `${a.hash.slice(0, 12)}, 2026-11-26T11:00:00.000Z` },
  ).text;
  const [group = '', kind = '', namespace = '', ...name] = key.split('/');
  return {
    key,
    group,
    kind,
    namespace,
    name: name.join('/'),
    change: 'CHANGED',
    withheld: false,
    before: { hash: b.hash, at: '2026-11-26T10:00:00.000Z' },
    after: { hash: a.hash, at: '2026-11-26T11:00:00.000Z' },
    diff,
  };
}

const version = (changes: DiffChange[]): DiffVersion => ({
  manifest: { hash: 'b'.repeat(64), from: '2026-11-26T11:00:00.000Z', to: null, entryCount: 3 },
  previousHash: 'a'.repeat(64),
  changes,
});

describe('manifest --diff rendering', () => {
  it('shows a changed image as a -/+ pair under the object ref and before/after headers, with no escape codes when colour is off', () => {
    const text = renderManifestDiff([
      version([changed('apps/Deployment/shop/web', deployment('web:1'), deployment('web:2'))]),
    ]);
    expect(text).not.toContain(ESC);
    const lines = text.split('\n');
    expect(lines[0]).toBe(`manifest bbbbbbbbbbbb  2026-11-26T11:00:00.000Z to now  3 entries, since aaaaaaaaaaaa`);
    expect(lines[1]).toBe('~ apps/Deployment/shop/web (changed)');
    expect(lines[2]).toMatch(/^--- before \([0-9a-f]{12}, 2026-11-26T10:00:00.000Z\)$/);
    expect(lines[3]).toMatch(/^\+\+\+ after \([0-9a-f]{12}, 2026-11-26T11:00:00.000Z\)$/);
    expect(lines).toContain('-      - image: web:1');
    expect(lines).toContain('+      - image: web:2');
  });

  it('shows redacted fields as stored: no status, resourceVersion or last-applied copy on either side', () => {
    const text = renderChange(changed('apps/Deployment/shop/web', deployment('web:1'), deployment('web:2')));
    for (const gone of ['status', 'readyReplicas', 'resourceVersion', 'last-applied-configuration', '"secret"'])
      expect(text).not.toContain(gone);
    expect(text).toContain(' spec:');
  });

  it('never shows Secret values, which the store does not hold', () => {
    const secret = (v: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'shop', labels: { v } },
      data: { password: Buffer.from(`pw-${v}`).toString('base64') },
      stringData: { token: `tok-${v}` },
    });
    const text = renderChange(changed('/Secret/shop/creds', secret('1'), secret('2')));
    expect(text).toContain('-    v: "1"');
    expect(text).toContain('+    v: "2"');
    expect(text).not.toMatch(/pw-|tok-|cHct/);
  });

  it('colours removed lines red, added green, hunks cyan, headers bold when asked, keeping the +/- markers', () => {
    const text = renderChange(changed('apps/Deployment/shop/web', deployment('web:1'), deployment('web:2')), {
      color: true,
    });
    expect(text).toContain(`${ESC}31m-      - image: web:1${ESC}39m`);
    expect(text).toContain(`${ESC}32m+      - image: web:2${ESC}39m`);
    expect(text).toMatch(new RegExp(`\\u001b\\[36m@@ -\\d+,\\d+ \\+\\d+,\\d+ @@\\u001b\\[39m`));
    expect(text).toContain(`${ESC}1m--- before (`);
  });

  it('shows an added object as all + and a removed one as all -, a cluster-scoped ref without a namespace', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    const diff = (before: string | null, after: string | null) =>
      unifiedDiff({ text: before, label: 'not in the manifest' }, { text: after, label: 'not in the manifest' }).text;
    const yaml = renderRevisionYaml(ns);
    const added: DiffChange = {
      key: '/Namespace//shop',
      group: '',
      kind: 'Namespace',
      namespace: '',
      name: 'shop',
      change: 'ADDED',
      withheld: false,
      before: null,
      after: { hash: 'c'.repeat(64), at: '2026-11-26T11:00:00.000Z' },
      diff: diff(null, yaml),
    };
    const removed: DiffChange = {
      ...added,
      change: 'REMOVED',
      before: added.after,
      after: null,
      diff: diff(yaml, null),
    };
    const addedLines = renderChange(added).split('\n');
    expect(addedLines[0]).toBe('+ Namespace/shop (added)');
    expect(
      addedLines
        .slice(4)
        .filter((l) => l !== '')
        .every((l) => l.startsWith('+')),
    ).toBe(true);
    const removedLines = renderChange(removed).split('\n');
    expect(removedLines[0]).toBe('- Namespace/shop (removed)');
    expect(
      removedLines
        .slice(4)
        .filter((l) => l !== '')
        .every((l) => l.startsWith('-')),
    ).toBe(true);
  });

  it('says so when a revision is not stored or withheld, and uses one ref format', () => {
    const change: DiffChange = {
      key: 'apps/Deployment/shop/web',
      group: 'apps',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'web',
      change: 'CHANGED',
      withheld: false,
      before: null,
      after: null,
      diff: null,
    };
    expect(renderChange(change)).toContain('content not stored');
    expect(renderChange({ ...change, namespace: 'pay', withheld: true })).toContain(
      'content withheld: the token may not read namespace pay',
    );
    expect(formatRef({ group: '', kind: 'Pod', namespace: 'shop', name: 'worker-0' })).toBe('Pod/shop/worker-0');
    expect(formatRef({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'view' })).toBe(
      'rbac.authorization.k8s.io/ClusterRole/view',
    );
  });
});
