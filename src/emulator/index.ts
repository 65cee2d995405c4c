/**
 * A Kubernetes API emulator over real HTTP(S), for tests, the demo and benchmarks. It speaks enough
 * of kube-apiserver's protocol (discovery, get/list/watch with selectors and pagination, create,
 * update, four patch types, delete with finalizers, Status errors, resourceVersions) that
 * `@kubernetes/client-node` and `kubectl` drive it like a cluster, and adds an in-process control
 * surface: apply objects, inject faults, count requests, compact history.
 *
 * @example
 *   const em = await startEmulator();
 *   em.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
 *   const kc = new KubeConfig(); kc.loadFromString(em.kubeconfig());
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { listInventoryCrds, parseApiVersion, readCrdType } from './catalog.ts';
import { ClusterState } from './cluster-state.ts';
import { FaultSet } from './faults.ts';
import { createPipeline } from './http-server.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { readManifestFile } from './load.ts';
import { applyMergePatch } from './patch.ts';
import { RequestLog } from './request-log.ts';
import { createSelfSignedCert } from './tls.ts';
import type { Emulator, EmulatorObjectRef, EmulatorOptions, KubeObject, RemoveOptions } from './types.ts';
import { WatchHub } from './watch-stream.ts';

export type { Emulator, EmulatorObjectRef, EmulatorOptions, EmulatorVerb, FaultEffect, FaultRule, KubeObject, RemoveOptions, RequestRecord } from './types.ts';
export { EmulatorInputError } from './in-process.ts';
export { ManifestError, parseManifests } from './load.ts';
export { FaultRuleError } from './faults.ts';
export { CertificateError } from './tls.ts';

import { applyInProcess, resolveRef, EmulatorInputError } from './in-process.ts';

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const clusterName = options.clusterName ?? 'emulated';
  const state = new ClusterState(options.watchHistorySize ?? 10_000);
  const faults = new FaultSet();
  const log = new RequestLog(options.requestLogSize ?? 100_000);
  const watches = new WatchHub(state, options.bookmarkIntervalMs ?? 5_000);
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  for (const crd of [...listInventoryCrds(), ...((options.crds ?? []) as KubeObject[])]) {
    const t = readCrdType(crd);
    if ('error' in t) throw new EmulatorInputError(`invalid CRD ${String(crd.metadata?.['name'] ?? '')}: ${t.error}`);
    applyInProcess(state, crd);
  }
  for (const name of DEFAULT_NAMESPACES) applyInProcess(state, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

  let address = '';
  const pipeline = createPipeline({ state, faults, log, watches, token: options.token, serverAddress: () => address, held, timers });
  const cert = options.tls === true ? await createSelfSignedCert(host) : undefined;
  const server = cert ? createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, pipeline) : createHttpServer(pipeline);
  // Watches and hung requests are long-lived by design; Node's defaults would cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  address = `${urlHost}:${port}`;
  const url = `${cert ? 'https' : 'http'}://${address}`;

  const kubeconfig = (opts?: { contextName?: string }): string =>
    renderKubeconfig({
      server: url,
      clusterName,
      ...(opts?.contextName !== undefined ? { contextName: opts.contextName } : {}),
      ...(options.token !== undefined ? { token: options.token } : {}),
      ...(cert ? { caPem: cert.certPem } : {}),
    });

  let closed: Promise<void> | undefined;
  const emulator: Emulator = {
    url,
    kubeconfig,
    async writeKubeconfig(path, opts) {
      await writeFile(path, kubeconfig(opts), { mode: 0o600 });
    },
    apply(obj) {
      for (const o of Array.isArray(obj) ? obj : [obj]) applyInProcess(state, o as KubeObject);
    },
    patchStatus(ref, status) {
      const { type, namespace } = resolveRef(state, ref);
      const current = state.get(type, namespace, ref.name);
      if (!current) throw new EmulatorInputError(`${ref.kind} ${namespace === '' ? '' : namespace + '/'}${ref.name} does not exist`);
      const next = applyMergePatch(current['status'] ?? {}, status);
      const result = state.update(type, namespace, ref.name, { ...current, status: next } as KubeObject, { inProcess: true });
      if (!result.ok) throw new EmulatorInputError(String(result.failure.body['message']));
    },
    remove(ref: EmulatorObjectRef, opts?: RemoveOptions) {
      const { type, namespace } = resolveRef(state, ref);
      return state.delete(type, namespace, ref.name, opts?.propagationPolicy !== undefined ? { propagationPolicy: opts.propagationPolicy } : {}).ok;
    },
    get(ref) {
      const { type, namespace } = resolveRef(state, ref);
      const obj = state.get(type, namespace, ref.name);
      return obj ? structuredClone(obj) : undefined;
    },
    async loadFile(path) {
      const objects = await readManifestFile(path);
      for (const o of objects) applyInProcess(state, o);
      return objects.length;
    },
    injectFault: (rule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    requests: () => log.list(),
    requestCount: (filter) => log.count(filter),
    resetRequests: () => log.clear(),
    compact: () => state.store.compact(),
    closeWatches: () => watches.endAll(),
    resourceVersion: () => state.store.revision(),
    objectCount: () => state.store.size(),
    close() {
      closed ??= new Promise<void>((resolve) => {
        watches.endAll();
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const res of held) res.destroy();
        held.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
  return emulator;
}

/** Group of an apiVersion (re-exported for scenario builders and callers building refs). */
export function groupOf(apiVersion: string): string {
  return parseApiVersion(apiVersion).group;
}
