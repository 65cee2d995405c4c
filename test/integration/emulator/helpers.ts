/**
 * Shared set-up for the emulator's integration tests: a started emulator, a client-node
 * KubeConfig pointing at it, object builders and a deadline-bounded poll.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { startEmulator, type Emulator, type EmulatorOptions } from '../../../src/emulator/index.ts';

/** A running emulator and a KubeConfig for it. */
export interface Harness {
  em: Emulator;
  kc: KubeConfig;
}

/** Starts an emulator on an ephemeral port with a KubeConfig loaded from its kubeconfig(). */
export async function startHarness(options: EmulatorOptions = {}): Promise<Harness> {
  const em = await startEmulator(options);
  const kc = new KubeConfig();
  kc.loadFromString(em.kubeconfig());
  return { em, kc };
}

/** A ConfigMap manifest. */
export function configMap(
  name: string,
  namespace = 'default',
  labels: Record<string, string> = {},
  data: Record<string, string> = {},
): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data };
}

/** A Deployment manifest with one container. */
export function deployment(
  name: string,
  namespace = 'default',
  image = 'nginx:1.25',
  replicas = 2,
): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The HTTP code and parsed Status body of a client-node ApiException. */
export function readApiError(e: unknown): { code: number; status: Record<string, unknown> } {
  const err = e as { code?: number; body?: unknown };
  const body =
    typeof err.body === 'string'
      ? (JSON.parse(err.body) as Record<string, unknown>)
      : ((err.body ?? {}) as Record<string, unknown>);
  return { code: err.code ?? 0, status: body };
}

/** Raw HTTP against the emulator (for what client-node does not expose, e.g. headers). */
export async function rawRequest(
  em: Emulator,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const res = await fetch(em.url + path, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
  };
}

const execFileAsync = promisify(execFile);

/** Fails with how to get kubectl when it cannot be run: the kubectl tests never skip. */
export async function requireKubectl(): Promise<void> {
  try {
    await execFileAsync('kubectl', ['version', '--client'], { timeout: 10_000 });
  } catch (e) {
    throw new Error(
      `kubectl is required for this test but could not be run (${(e as Error).message}); install kubectl >= 1.30 and put it on PATH (.ci/run installs one where it is missing)`,
    );
  }
}

/** kubectl against the kubeconfig `kubeconfig()` names: its stdout, or how it failed when it must. */
export function kubectlWith(kubeconfig: () => string, timeoutMs = 30_000) {
  const kubectl = async (...args: string[]): Promise<string> =>
    (await execFileAsync('kubectl', ['--kubeconfig', kubeconfig(), ...args], { timeout: timeoutMs })).stdout;
  const kubectlFails = async (...args: string[]): Promise<{ code: number | undefined; stderr: string }> => {
    try {
      await kubectl(...args);
    } catch (e) {
      const err = e as { code?: number; stderr?: string };
      return { code: err.code, stderr: String(err.stderr) };
    }
    throw new Error(`kubectl ${args.join(' ')} succeeded but was expected to fail`);
  };
  return { kubectl, kubectlFails };
}
