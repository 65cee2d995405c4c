/**
 * DNS rebinding against the emulator's Kubernetes API: a page of `http://attacker.example:<port>`
 * whose name is re-pointed at 127.0.0.1 sends `Host: attacker.example:<port>` and must not read the
 * demo cluster. The clients that are meant to reach it still do: @kubernetes/client-node and
 * kubectl send the kubeconfig server's host:port, and loopback names and addresses pass.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../../src/emulator/index.ts';
import { configMap, kubectlWith, requireKubectl, startHarness, waitFor, type Harness } from './helpers.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { tmpdir } from 'node:os';
import path from 'node:path';

let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  h.em.apply(configMap('rebinding-target', 'default', {}, { secret: 'cluster-content-4b1e' }));
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-emulator-host-'));
  writeFileSync(path.join(dir, 'kubeconfig'), h.em.kubeconfig());
});
afterAll(async () => {
  await h?.em.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** GET `path` on the emulator with the given `Host` header, as a browser would send it. */
function getWithHost(host: string, urlPath: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(h.em.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: urlPath, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe("the emulator's Host rule", () => {
  const port = () => new URL(h.em.url).port;

  it.each(['attacker.example', 'attacker.example:PORT', 'localhost.attacker.example:PORT', '127.0.0.1.nip.io:PORT'])(
    'refuses Host: %s with 421 and shows nothing of the cluster',
    async (host) => {
      const answer = await getWithHost(host.replace('PORT', port()), '/api/v1/namespaces/default/configmaps');
      expect(answer.status).toBe(421);
      expect(answer.body).not.toContain('rebinding-target');
      expect(answer.body).not.toContain('cluster-content-4b1e');
      expect(JSON.parse(answer.body)).toMatchObject({ kind: 'Status', status: 'Failure', code: 421 });
    },
  );

  it.each(['127.0.0.1:PORT', 'localhost:PORT', '[::1]:PORT', '127.0.0.1'])('answers Host: %s', async (host) => {
    const answer = await getWithHost(host.replace('PORT', port()), '/api/v1/namespaces/default/configmaps');
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('cluster-content-4b1e');
  });

  it('answers @kubernetes/client-node and kubectl, which send the kubeconfig server as Host', async () => {
    const listed = await h.kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: 'default' });
    expect(listed.items.map((c) => c.metadata?.name)).toContain('rebinding-target');
    await requireKubectl();
    const { kubectl } = kubectlWith(() => path.join(dir, 'kubeconfig'));
    expect(await kubectl('get', 'configmap', 'rebinding-target', '-n', 'default', '-o', 'name')).toBe(
      'configmap/rebinding-target\n',
    );
  });

  it('answers a name given in allowedHosts; with a token required, any Host (a page cannot send the token)', async () => {
    const named = await startEmulator({ allowedHosts: ['api.cluster.test'] });
    const tokened = await startEmulator({ token: 'emulator-token-0123456789' });
    try {
      const hostOf = async (url: string, host: string, token?: string) => {
        const { hostname, port } = new URL(url);
        return new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: hostname,
              port,
              path: '/api/v1/namespaces',
              headers: { host, ...(token ? { authorization: `Bearer ${token}` } : {}) },
            },
            (res) => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.end();
        });
      };
      expect(await hostOf(named.url, 'api.cluster.test:6443')).toBe(200);
      expect(await hostOf(named.url, 'attacker.example:6443')).toBe(421);
      expect(await hostOf(tokened.url, 'api.cluster.test:6443', 'emulator-token-0123456789')).toBe(200);
      expect(await hostOf(tokened.url, 'attacker.example:6443')).toBe(401);
    } finally {
      await named.close();
      await tokened.close();
    }
  });

  it('the standalone emulator answers a name given with --allowed-host, and 421 to others', async () => {
    const kubeconfig = path.join(dir, 'standalone.kubeconfig');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/emulator/main.ts',
        '--port',
        '0',
        '--kubeconfig',
        kubeconfig,
        '--allowed-host',
        'emulator.internal',
      ],
      { cwd: process.cwd() },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor('the emulator to listen', () => (out.includes('listening on') ? true : undefined), 20_000);
      const server = (parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] })
        .clusters[0]?.cluster.server as string;
      const statusWith = (host: string) =>
        new Promise<number>((resolve, reject) => {
          const { hostname, port } = new URL(server);
          const req = request({ host: hostname, port, path: '/api/v1/namespaces', headers: { host } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end();
        });
      expect(await statusWith('emulator.internal:6443')).toBe(200);
      expect(await statusWith('attacker.example:6443')).toBe(421);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });
});
