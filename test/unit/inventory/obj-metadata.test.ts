import { describe, expect, it } from 'vitest';
import { formatObjMetadata, parseObjMetadata } from '../../../src/inventory/obj-metadata.ts';
import { compareRefs, normalizeRefs, refKey } from '../../../src/inventory/ref-key.ts';
import type { ObjectRef } from '../../../src/inventory/types.ts';

const ref = (group: string, kind: string, namespace: string, name: string): ObjectRef => ({
  group,
  kind,
  namespace,
  name,
});

describe('ObjMetadata strings', () => {
  it.each([
    [
      'namespaced object in a named group',
      'shop_frontend_apps_Deployment',
      ref('apps', 'Deployment', 'shop', 'frontend'),
    ],
    ['core-group object leaves "__" before the kind', 'shop_frontend__Service', ref('', 'Service', 'shop', 'frontend')],
    ['cluster-scoped object has a leading "_"', '_shop__Namespace', ref('', 'Namespace', '', 'shop')],
    [
      'cluster-scoped CRD keeps its dotted name',
      '_widgets.example.com_apiextensions.k8s.io_CustomResourceDefinition',
      ref('apiextensions.k8s.io', 'CustomResourceDefinition', '', 'widgets.example.com'),
    ],
    [
      'RBAC name with colons is written with "__"',
      '_system__aggregate-to-view__shop_rbac.authorization.k8s.io_ClusterRole',
      ref('rbac.authorization.k8s.io', 'ClusterRole', '', 'system:aggregate-to-view:shop'),
    ],
    [
      'a name of 13 characters and more, cut from the id',
      'shop_checkout-worker-blue_apps_Deployment',
      ref('apps', 'Deployment', 'shop', 'checkout-worker-blue'),
    ],
    ['a name of exactly 13 characters', 'shop_abcdefghijklm__ConfigMap', ref('', 'ConfigMap', 'shop', 'abcdefghijklm')],
    [
      'a long name outside Latin-1',
      'shop_grüße-an-das-team-日本_example.com_Widget',
      ref('example.com', 'Widget', 'shop', 'grüße-an-das-team-日本'),
    ],
    [
      'namespaced RoleBinding with a colon',
      'kube-system_system__controller__bootstrap-signer_rbac.authorization.k8s.io_RoleBinding',
      ref('rbac.authorization.k8s.io', 'RoleBinding', 'kube-system', 'system:controller:bootstrap-signer'),
    ],
  ])('%s: %s', (_label, id, expected) => {
    const parsed = parseObjMetadata(id);
    expect(parsed).toEqual({ ok: true, ref: expected });
    expect(formatObjMetadata(expected)).toBe(id);
  });

  it("accepts a name with a single underscore, as Flux's cli-utils fork does, and rejects it in strict mode", () => {
    expect(parseObjMetadata('_my_role_rbac.authorization.k8s.io_ClusterRole')).toEqual({
      ok: true,
      ref: ref('rbac.authorization.k8s.io', 'ClusterRole', '', 'my_role'),
    });
    const strict = parseObjMetadata('_my_role_rbac.authorization.k8s.io_ClusterRole', { strict: true });
    expect(strict.ok).toBe(false);
    if (!strict.ok) expect(strict.message).toContain('too many fields');
  });

  it('does not transcode colons for kinds outside RBAC', () => {
    expect(formatObjMetadata(ref('', 'ConfigMap', 'shop', 'a:b'))).toBe('shop_a:b__ConfigMap');
  });

  it.each([
    ['no separator at all', 'frontend', 'too few'],
    ['only namespace and name', 'shop_frontend', 'too few'],
    ['missing the group field', 'shop_frontend_Deployment', 'too few'],
    ['empty name', 'shop__apps_Deployment', 'empty name'],
    ['empty kind', 'shop_frontend_apps_', 'empty kind'],
    ['empty string', '', 'too few'],
  ])('rejects %s with a message naming the id', (_label, id, fragment) => {
    const parsed = parseObjMetadata(id);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toContain(fragment);
      expect(parsed.message).toContain(`"${id}"`);
    }
  });
});

describe('refKey and normalisation', () => {
  it('gives the same key regardless of version, and different keys for different namespaces', () => {
    const a = { ...ref('apps', 'Deployment', 'shop', 'web'), version: 'v1' };
    expect(refKey(a)).toBe(refKey(ref('apps', 'Deployment', 'shop', 'web')));
    expect(refKey(a)).not.toBe(refKey(ref('apps', 'Deployment', 'other', 'web')));
  });

  it('drops duplicates, keeps a recorded version, and sorts by group, kind, namespace, name', () => {
    const out = normalizeRefs([
      ref('apps', 'Deployment', 'shop', 'web'),
      ref('', 'Service', 'shop', 'web'),
      { ...ref('apps', 'Deployment', 'shop', 'web'), version: 'v1' },
      ref('', 'Namespace', '', 'shop'),
      ref('', 'Service', 'a', 'web'),
    ]);
    expect(out.map(refKey)).toEqual([
      '/Namespace//shop',
      '/Service/a/web',
      '/Service/shop/web',
      'apps/Deployment/shop/web',
    ]);
    expect(out[3]?.version).toBe('v1');
    expect([...out].sort(compareRefs)).toEqual(out);
  });
});
