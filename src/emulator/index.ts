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
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { writeFile } from 'node:fs/promises';
import { isIP, type AddressInfo } from 'node:net';
import { createHostGuard } from '../http/origin.ts';
import { listInventoryCrds, readCrdType } from './catalog.ts';
import { ClusterState } from './cluster-state.ts';
import { FaultSet } from './faults.ts';
import { createPipeline } from './http-server.ts';
import { renderKubeconfig } from './kubeconfig.ts';
import { readManifestFile } from './load.ts';
import type { ServiceAccountIdentity } from './rbac.ts';
import { RequestLog } from './request-log.ts';
import { createSelfSignedCert } from './tls.ts';
import type { Emulator, EmulatorOptions, KubeObject } from './types.ts';
import { WatchHub } from './watch-stream.ts';

import {
  applyInProcess,
  EmulatorInputError,
  getInProcess,
  listInProcess,
  patchStatusInProcess,
  removeInProcess,
} from './in-process.ts';

export type {
  Emulator,
  EmulatorObjectRef,
  EmulatorOptions,
  EmulatorVerb,
  FaultEffect,
  FaultRule,
  KubeObject,
  RemoveOptions,
  RequestRecord,
} from './types.ts';
export { EmulatorInputError } from './in-process.ts';
export { ManifestError, parseManifests } from './load.ts';
export { FaultRuleError } from './faults.ts';
export { CertificateError } from './tls.ts';
export { startFaultControl } from './control.ts';
export type { ControlledFault, FaultControl, FaultControlOptions, FaultRequest } from './control.ts';

const DEFAULT_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

// The inventory CRDs, the caller's CRDs and the namespaces every cluster has.
function seedState(state: ClusterState, crds: KubeObject[]): void {
  for (const crd of [...listInventoryCrds(), ...crds]) {
    const t = readCrdType(crd);
    if ('error' in t) throw new EmulatorInputError(`invalid CRD ${String(crd.metadata?.['name'] ?? '')}: ${t.error}`);
    applyInProcess(state, crd);
  }
  for (const name of DEFAULT_NAMESPACES)
    applyInProcess(state, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const clusterName = options.clusterName ?? 'emulated';
  const state = new ClusterState(
    options.watchHistorySize ?? 10_000,
    options.strictNamespaces ?? false,
    options.completeRollouts ?? false,
  );
  const faults = new FaultSet();
  const log = new RequestLog(options.requestLogSize ?? 100_000);
  const watches = new WatchHub(state, options.bookmarkIntervalMs ?? 5_000);
  const held = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();

  seedState(state, (options.crds ?? []) as KubeObject[]);

  let address = '';
  const rbac = options.rbac === true ? { tokens: new Map<string, ServiceAccountIdentity>() } : undefined;
  const pipeline = createPipeline({
    state,
    faults,
    log,
    watches,
    token: options.token,
    rbac,
    serverAddress: () => address,
    // Loopback names, IP addresses (clients name the address they connect to; kubectl and
    // @kubernetes/client-node send the kubeconfig server's host:port), the name it binds, if any,
    // and allowedHosts. Checked while no token is required, as phaselog's API does on loopback.
    hostGuard: createHostGuard({
      loopbackBind: options.token === undefined,
      // The bound name joins the list only when the list counts: it must not turn the check on.
      allowedHosts:
        options.token === undefined || (options.allowedHosts?.length ?? 0) > 0
          ? [...(isIP(host) === 0 ? [host] : []), ...(options.allowedHosts ?? [])]
          : [],
      allowAddresses: true,
    }),
    held,
    timers,
  });
  const cert = options.tls === true ? await createSelfSignedCert(host) : undefined;
  const server = cert
    ? createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, pipeline)
    : createHttpServer(pipeline);
  // Watches and hung requests are long-lived by design; Node's defaults would cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 30_000;

  const port = await listen(server, options.port ?? 0, host);
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
  let refusing = false;
  const emulator: Emulator = {
    url,
    kubeconfig,
    async writeKubeconfig(path, opts) {
      await writeFile(path, kubeconfig(opts), { mode: 0o600 });
    },
    apply(obj) {
      for (const o of Array.isArray(obj) ? obj : [obj]) applyInProcess(state, o as KubeObject);
    },
    patchStatus: (ref, status) => patchStatusInProcess(state, ref, status),
    remove: (ref, opts) => removeInProcess(state, ref, opts),
    get: (ref) => getInProcess(state, ref),
    list: (query) => listInProcess(state, query),
    async loadFile(path) {
      const objects = await readManifestFile(path);
      for (const o of objects) applyInProcess(state, o);
      return objects.length;
    },
    injectFault: (rule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    faults: () => faults.list(),
    get refusing() {
      return refusing;
    },
    async refuseConnections(refuse) {
      if (refuse === refusing || closed) return;
      refusing = refuse;
      if (refuse) {
        await new Promise<void>((resolve) => {
          watches.endAll();
          for (const res of held) res.destroy();
          held.clear();
          server.close(() => resolve());
          server.closeAllConnections();
        });
      } else {
        await listen(server, port, host);
      }
    },
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
        if (refusing) resolve();
        else server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
  return emulator;
}
