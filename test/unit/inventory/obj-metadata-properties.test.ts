import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatObjMetadata, parseObjMetadata } from '../../../src/inventory/obj-metadata.ts';
import { parseInventory } from '../../../src/inventory/parse-inventory.ts';

const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$/);
const dnsSubdomain = fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const kind = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,20}$/);
const group = fc.oneof(fc.constant(''), dnsSubdomain);
const namespace = fc.oneof(fc.constant(''), dnsLabel);
const rbacKind = fc.constantFrom('Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding');
// RBAC names may hold colons (system:controller:x); segments avoid "_" so the encoding is unambiguous.
const rbacName = fc.array(dnsSubdomain, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(':'));

describe('ObjMetadata properties', () => {
  it('parsing a formatted ref gives the ref back, for any valid Kubernetes names', () => {
    fc.assert(
      fc.property(group, kind, namespace, dnsSubdomain, (g, k, ns, name) => {
        const ref = { group: g, kind: k, namespace: ns, name };
        expect(parseObjMetadata(formatObjMetadata(ref))).toEqual({ ok: true, ref });
      }),
      { numRuns: 2000 },
    );
  });

  it('RBAC names with colons survive the "__" encoding', () => {
    fc.assert(
      fc.property(rbacKind, namespace, rbacName, (k, ns, name) => {
        const ref = { group: 'rbac.authorization.k8s.io', kind: k, namespace: ns, name };
        const id = formatObjMetadata(ref);
        expect(id).not.toContain(':');
        expect(parseObjMetadata(id)).toEqual({ ok: true, ref });
      }),
      { numRuns: 1000 },
    );
  });

  it('arbitrary strings and arbitrary inventory data never throw', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const parsed = parseObjMetadata(s);
        expect(typeof parsed.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (data, entries) => {
        for (const obj of [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'i', namespace: 'n', labels: { 'cli-utils.sigs.k8s.io/inventory-id': 'x' } },
            data,
          },
          {
            apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
            kind: 'Kustomization',
            metadata: { name: 'k', namespace: 'n' },
            status: { inventory: { entries } },
          },
          {
            apiVersion: 'argoproj.io/v1alpha1',
            kind: 'Application',
            metadata: { name: 'a', namespace: 'n' },
            status: { resources: entries },
          },
          {
            apiVersion: 'kpt.dev/v1alpha1',
            kind: 'ResourceGroup',
            metadata: { name: 'r', namespace: 'n' },
            spec: { resources: entries },
          },
          data,
        ]) {
          const result = parseInventory(obj);
          if (result.ok) expect(Array.isArray(result.phase.entries)).toBe(true);
          else expect(result.error.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
