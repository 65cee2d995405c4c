/**
 * The emulator's `rbac: true`: tokens from TokenRequest act as their service account, authorized
 * by the RBAC objects stored in the emulator, with the apiserver's scoping (a RoleBinding grants in
 * its namespace only, resourceNames narrow a rule). Each grant is paired with the request just
 * outside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { rawRequest } from './helpers.ts';

const ADMIN = 'admin-token';
let em: Emulator;

async function mintToken(namespace: string, name: string): Promise<string> {
  const res = await rawRequest(em, `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }),
  });
  expect(res.status).toBe(201);
  return String((res.json.status as { token: string }).token);
}

async function status(token: string, path: string, method = 'GET', body?: unknown): Promise<number> {
  const res = await rawRequest(em, path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return res.status;
}

beforeAll(async () => {
  em = await startEmulator({ port: 0, token: ADMIN, rbac: true });
  const rbac = 'rbac.authorization.k8s.io/v1';
  em.apply([
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'reader', namespace: 'ops' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'local', namespace: 'ops' } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody', namespace: 'ops' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ops' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', namespace: 'ops' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'shop' } },
    {
      apiVersion: rbac,
      kind: 'ClusterRole',
      metadata: { name: 'read-apps' },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'read-apps' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'ops' }],
    },
    {
      apiVersion: rbac,
      kind: 'Role',
      metadata: { name: 'one-configmap', namespace: 'ops' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'], verbs: ['get'] }],
    },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: 'local', namespace: 'ops' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'one-configmap' },
      subjects: [{ kind: 'ServiceAccount', name: 'local', namespace: 'ops' }],
    },
    {
      apiVersion: rbac,
      kind: 'RoleBinding',
      metadata: { name: 'local-apps', namespace: 'ops' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'read-apps' },
      subjects: [{ kind: 'ServiceAccount', name: 'local', namespace: 'ops' }],
    },
  ]);
});
afterAll(async () => em.close());

describe('service-account tokens and RBAC', () => {
  it('a ClusterRoleBinding grants its verbs everywhere, and nothing else', async () => {
    const token = await mintToken('ops', 'reader');
    expect(await status(token, '/apis/apps/v1/deployments')).toBe(200);
    expect(await status(token, '/apis/apps/v1/namespaces/shop/deployments?watch=true&timeoutSeconds=1')).toBe(200);
    expect(await status(token, '/api/v1/namespaces/ops/configmaps')).toBe(403);
    expect(
      await status(token, '/apis/apps/v1/namespaces/ops/deployments', 'POST', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'x' },
      }),
    ).toBe(403);
  });

  it('a RoleBinding grants in its own namespace only; resourceNames narrow a rule to those objects', async () => {
    const token = await mintToken('ops', 'local');
    expect(await status(token, '/api/v1/namespaces/ops/configmaps/a')).toBe(200);
    expect(await status(token, '/api/v1/namespaces/ops/configmaps/b')).toBe(403);
    expect(await status(token, '/api/v1/namespaces/ops/configmaps')).toBe(403);
    expect(await status(token, '/api/v1/namespaces/shop/configmaps/a')).toBe(403);
    expect(await status(token, '/apis/apps/v1/namespaces/ops/deployments')).toBe(200);
    expect(await status(token, '/apis/apps/v1/namespaces/shop/deployments')).toBe(403);
    expect(await status(token, '/apis/apps/v1/deployments')).toBe(403);
  });

  it("a denied request gets the apiserver's Forbidden Status naming the user", async () => {
    const token = await mintToken('ops', 'nobody');
    const res = await rawRequest(em, '/api/v1/namespaces/ops/configmaps', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      message:
        'configmaps is forbidden: User "system:serviceaccount:ops:nobody" cannot list resource "configmaps" in API group "" in the namespace "ops"',
    });
    // Discovery stays open to every authenticated user.
    expect(await status(token, '/apis')).toBe(200);
  });

  it('reviews answer from the stored RBAC objects for a service account', async () => {
    const token = await mintToken('ops', 'reader');
    const review = async (resourceAttributes: Record<string, string>): Promise<unknown> => {
      const res = await rawRequest(em, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes },
        }),
      });
      return (res.json.status as { allowed: boolean }).allowed;
    };
    expect(await review({ verb: 'list', group: 'apps', resource: 'deployments' })).toBe(true);
    expect(await review({ verb: 'delete', group: 'apps', resource: 'deployments', namespace: 'ops' })).toBe(false);
    const whoami = await rawRequest(em, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    expect((whoami.json.status as { userInfo: { username: string } }).userInfo.username).toBe(
      'system:serviceaccount:ops:reader',
    );
  });

  it('a bearer token the emulator never issued is refused; the admin token keeps full access', async () => {
    expect(await status('made-up-token', '/apis/apps/v1/deployments')).toBe(401);
    expect(await status(ADMIN, '/api/v1/namespaces/ops/configmaps')).toBe(200);
  });

  it('without rbac, minted tokens authenticate nothing (the one bearer token does)', async () => {
    const plain = await startEmulator({ port: 0, token: ADMIN });
    try {
      plain.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'sa', namespace: 'ops' } });
      const res = await fetch(`${plain.url}/api/v1/namespaces/ops/serviceaccounts/sa/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }),
      });
      const minted = ((await res.json()) as { status: { token: string } }).status.token;
      expect(
        (await fetch(`${plain.url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${minted}` } })).status,
      ).toBe(401);
    } finally {
      await plain.close();
    }
  });
});
