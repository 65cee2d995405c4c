/**
 * Kubeconfig files read as kubectl reads them: a `KUBECONFIG` list merged with kubectl's
 * precedence (checked against kubectl itself), relative paths resolved against the file that
 * names them, files that cannot be used named in the error, and token files re-read on change.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startEmulator, type Emulator } from '../../../src/emulator/index.ts';
import { createClusterClient } from '../../../src/kube/cluster-client.ts';
import { loadClusters, loadKubeconfigClusters, type ClusterHandle } from '../../../src/kube/clusters.ts';
import { clustersConfigSchema } from '../../../src/kube/config.ts';
import { KubeconfigError, readKubeconfigFiles, splitKubeconfigPaths } from '../../../src/kube/kubeconfig-files.ts';
import { readObjects } from '../../../src/kube/read-objects.ts';
import { makeObject, refOf } from './helpers.ts';

const run = promisify(execFile);
const TOKEN = 'rotated-token';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'phaselog-kubeconfig-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(file: string, doc: unknown): string {
  const full = path.join(dir, file);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, typeof doc === 'string' ? doc : stringify(doc));
  return full;
}

async function reads(handle: ClusterHandle): Promise<string> {
  const client = createClusterClient(handle);
  try {
    const result = await readObjects(client, [refOf('ConfigMap', 'shop', 'web')]);
    return result.clusterError?.kind ?? (result.objects.size === 1 ? 'read' : 'missing');
  } finally {
    client.close();
  }
}

describe('a KUBECONFIG list, merged as kubectl merges it', () => {
  let list: string;
  beforeAll(() => {
    const one = write('one/config', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'shared', cluster: { server: 'https://one.example:6443', 'certificate-authority': 'ca.pem' } },
      ],
      users: [
        { name: 'u', user: { token: 't1' } },
        {
          name: 'files',
          user: { tokenFile: 'secrets/token', 'client-certificate': 'certs/c.pem', 'client-key': 'certs/k.pem' },
        },
      ],
      contexts: [{ name: 'a', context: { cluster: 'shared', user: 'u' } }],
    });
    const two = write('two/config', {
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'b',
      clusters: [
        { name: 'shared', cluster: { server: 'https://two.example:6443' } },
        { name: 'other', cluster: { server: 'https://three.example:6443', 'proxy-url': 'http://proxy.example:3128' } },
      ],
      users: [{ name: 'u', user: { token: 't2' } }],
      contexts: [
        { name: 'a', context: { cluster: 'other', user: 'u' } },
        { name: 'b', context: { cluster: 'other', user: 'files' } },
      ],
    });
    const three = write('three', { apiVersion: 'v1', kind: 'Config', 'current-context': 'a' });
    const empty = write('empty', '# nothing yet\n');
    list = [one, path.join(dir, 'missing'), empty, two, three].join(path.delimiter);
  });

  it('agrees with kubectl on contexts, clusters, users and current-context', async () => {
    const { stdout } = await run('kubectl', ['config', 'view', '--raw', '-o', 'json'], {
      env: { ...process.env, KUBECONFIG: list },
      timeout: 30_000,
    });
    const kubectl = JSON.parse(stdout) as {
      'current-context': string;
      contexts: Array<{ name: string; context: { cluster: string; user: string } }>;
      clusters: Array<{ name: string; cluster: { server: string; 'proxy-url'?: string } }>;
      users: Array<{ name: string; user: { token?: string } }>;
    };
    const merged = readKubeconfigFiles(splitKubeconfigPaths(list));
    const kc = merged.kubeConfig;
    expect(kc.getCurrentContext()).toBe(kubectl['current-context']);
    expect(kc.getCurrentContext()).toBe('b');
    const sortByName = <T extends { name: string }>(items: T[]): T[] =>
      [...items].sort((x, y) => x.name.localeCompare(y.name));
    expect(sortByName(kc.getContexts()).map((c) => [c.name, c.cluster, c.user])).toEqual(
      sortByName(kubectl.contexts).map((c) => [c.name, c.context.cluster, c.context.user]),
    );
    expect(sortByName(kc.getClusters()).map((c) => [c.name, c.server, c.proxyUrl])).toEqual(
      sortByName(kubectl.clusters).map((c) => [c.name, c.cluster.server, c.cluster['proxy-url']]),
    );
    expect(kc.getUser('u')?.token).toBe(kubectl.users.find((u) => u.name === 'u')?.user.token);
    expect(kc.getUser('u')?.token).toBe('t1');
    expect(merged.missing).toEqual([path.join(dir, 'missing')]);
  });

  it('resolves relative paths against the folder of the file that names them', () => {
    const kc = readKubeconfigFiles(splitKubeconfigPaths(list)).kubeConfig;
    expect(kc.getCluster('shared')?.caFile).toBe(path.join(dir, 'one/ca.pem'));
    const files = kc.getUser('files');
    expect(files?.certFile).toBe(path.join(dir, 'one/certs/c.pem'));
    expect(files?.keyFile).toBe(path.join(dir, 'one/certs/k.pem'));
    expect(files?.authProvider?.config?.path).toBe(path.join(dir, 'one/secrets/token'));
  });

  it('makes one cluster per context of the merged files', () => {
    const { clusters, errors } = loadKubeconfigClusters({ paths: splitKubeconfigPaths(list) });
    expect(errors).toEqual([]);
    expect(clusters.map((c) => [c.name, c.server])).toEqual([
      ['a', 'https://one.example:6443'],
      ['b', 'https://three.example:6443'],
    ]);
  });
});

describe('proxy-url schemes', () => {
  it('a context whose proxy-url kubectl could not use either is reported; the other contexts load', () => {
    const file = write('proxies.yaml', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        { name: 'ftp', cluster: { server: 'https://a.example', 'proxy-url': 'ftp://proxy.example:21' } },
        { name: 'socks', cluster: { server: 'https://b.example', 'proxy-url': 'socks5://proxy.example:1080' } },
      ],
      users: [{ name: 'u', user: {} }],
      contexts: [
        { name: 'via-ftp', context: { cluster: 'ftp', user: 'u' } },
        { name: 'via-socks', context: { cluster: 'socks', user: 'u' } },
      ],
    });
    const { clusters, errors } = loadKubeconfigClusters({ path: file });
    expect(clusters.map((c) => c.name)).toEqual(['via-socks']);
    expect(errors).toEqual([
      {
        cluster: 'via-ftp',
        message: 'context "via-ftp": proxy-url scheme ftp: is not supported (use http, https or socks5)',
      },
    ]);
  });
});

describe('a kubeconfig that cannot be used is an error naming it', () => {
  it.each([
    ['a file that is not YAML', () => write('broken.yaml', 'clusters: [\n'), /cannot parse kubeconfig .*broken\.yaml/],
    [
      'a file whose cluster has no server',
      () => write('no-server.yaml', { apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'x', cluster: {} }] }),
      /cannot parse kubeconfig .*no-server\.yaml/,
    ],
    [
      'a folder',
      () => {
        mkdirSync(path.join(dir, 'folder'), { recursive: true });
        return path.join(dir, 'folder');
      },
      /cannot read kubeconfig .*folder: EISDIR/,
    ],
  ])('%s, even after a good file in the list', (_what, makeFile, message) => {
    const good = write('good.yaml', {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'g', cluster: { server: 'https://g.example' } }],
    });
    const bad = makeFile();
    let error: unknown;
    try {
      readKubeconfigFiles([good, bad]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KubeconfigError);
    expect((error as KubeconfigError).message).toMatch(message);
    expect((error as KubeconfigError).file).toBe(bad);
  });

  it('a parse error names the file but never quotes it (it may hold a token)', () => {
    const file = write(
      'leaky.yaml',
      'users:\n- name: u\n  user:\n    token: s3cret-token-value\n      client-key-data: [\n',
    );
    expect(() => readKubeconfigFiles([file])).toThrow(KubeconfigError);
    try {
      readKubeconfigFiles([file]);
    } catch (error) {
      expect((error as Error).message).toContain(file);
      expect((error as Error).message).not.toContain('s3cret-token-value');
    }
  });

  it('a list of which no file exists names them all', () => {
    expect(() => readKubeconfigFiles([path.join(dir, 'nope-1'), path.join(dir, 'nope-2')])).toThrow(
      `none of the kubeconfig files exists: ${path.join(dir, 'nope-1')}, ${path.join(dir, 'nope-2')}`,
    );
  });
});

describe('credentials that change on disk', () => {
  let em: Emulator;
  beforeAll(async () => {
    em = await startEmulator({ port: 0, tls: true, token: TOKEN });
    em.apply(makeObject('ConfigMap', 'shop', 'web'));
  });
  afterAll(async () => em.close());

  it('a kubeconfig tokenFile (relative to the kubeconfig) is re-read on the next request after it is rewritten', async () => {
    const doc = parse(em.kubeconfig()) as { users: Array<{ user: Record<string, unknown> }> };
    for (const u of doc.users) u.user = { tokenFile: 'token' };
    const kubeconfig = write('rotating/config', doc);
    const tokenFile = write('rotating/token', 'expired-token\n');
    const handle = loadKubeconfigClusters({ path: kubeconfig }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    expect(await reads(handle)).toBe('UNAUTHORIZED');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    expect(await reads(handle)).toBe('read');
    writeFileSync(tokenFile, 'revoked\n');
    expect(await reads(handle)).toBe('UNAUTHORIZED');
  });

  it('a token file that disappears is an error naming it, and reading resumes when it is back', async () => {
    const doc = parse(em.kubeconfig()) as { users: Array<{ user: Record<string, unknown> }> };
    for (const u of doc.users) u.user = { tokenFile: 'token' };
    const kubeconfig = write('vanishing/config', doc);
    const tokenFile = write('vanishing/token', TOKEN);
    const handle = loadKubeconfigClusters({ path: kubeconfig }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    expect(await reads(handle)).toBe('read');
    rmSync(tokenFile);
    const client = createClusterClient(handle);
    try {
      const result = await readObjects(client, [refOf('ConfigMap', 'shop', 'web')]);
      const message = result.clusterError?.message ?? result.errors[0]?.error.message;
      expect(message).toContain(`cannot load the credentials for ${em.url}`);
      expect(message).toContain(tokenFile);
      expect(result.missing).toEqual([]); // not read is not NotFound
    } finally {
      client.close();
    }
    writeFileSync(tokenFile, TOKEN);
    expect(await reads(handle)).toBe('read');
  });

  it('a `clusters:` entry with tokenFile follows the file too', async () => {
    const caDoc = parse(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, string> }> };
    const caFile = write(
      'entry/ca.crt',
      Buffer.from(caDoc.clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString(),
    );
    const tokenFile = write('entry/token', 'old');
    const handle = loadClusters(clustersConfigSchema.parse([{ name: 'edge', server: em.url, tokenFile, caFile }]))
      .clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    expect(await reads(handle)).toBe('UNAUTHORIZED');
    writeFileSync(tokenFile, TOKEN);
    expect(await reads(handle)).toBe('read');
  });

  it('a relative certificate-authority file is found from another working directory', async () => {
    const doc = parse(em.kubeconfig()) as { clusters: Array<{ cluster: Record<string, string> }> };
    const cluster = doc.clusters[0]?.cluster as Record<string, string>;
    write('relative/pki/ca.crt', Buffer.from(cluster['certificate-authority-data'] ?? '', 'base64').toString());
    delete cluster['certificate-authority-data'];
    cluster['certificate-authority'] = 'pki/ca.crt';
    const kubeconfig = write('relative/config', doc);
    expect(process.cwd()).not.toBe(path.join(dir, 'relative'));
    const handle = loadKubeconfigClusters({ path: kubeconfig }).clusters[0];
    if (handle === undefined) throw new Error('no cluster');
    expect(await reads(handle)).toBe('read');
  });
});
