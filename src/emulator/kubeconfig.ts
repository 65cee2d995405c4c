/**
 * Kubeconfig YAML for the emulator (clusters/users/contexts with one entry each).
 */
import { parse, stringify } from 'yaml';

/** What a kubeconfig needs to know about a server. */
export interface KubeconfigInput {
  server: string;
  clusterName: string;
  contextName?: string;
  token?: string;
  /** PEM of the self-signed certificate when serving TLS. */
  caPem?: string;
}

/** Renders a kubeconfig whose current context points at the emulator. */
export function renderKubeconfig(input: KubeconfigInput): string {
  const context = input.contextName ?? input.clusterName;
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caPem !== undefined) cluster['certificate-authority-data'] = Buffer.from(input.caPem).toString('base64');
  // client-node 1.4 refuses http:// servers unless skipTLSVerify is set; kubectl ignores it for http.
  else if (input.server.startsWith('http://')) cluster['insecure-skip-tls-verify'] = true;
  const user: Record<string, unknown> = input.token !== undefined ? { token: input.token } : {};
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: input.clusterName, cluster }],
    users: [{ name: input.clusterName, user }],
    contexts: [
      { name: context, context: { cluster: input.clusterName, user: input.clusterName, namespace: 'default' } },
    ],
    'current-context': context,
    preferences: {},
  });
}

/** Merges kubeconfigs of several emulated clusters into one; the first one's context is current. */
export function mergeKubeconfigs(documents: string[]): string {
  const parsed = documents.map(
    (d) => parse(d) as { clusters: unknown[]; users: unknown[]; contexts: unknown[]; 'current-context': string },
  );
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: parsed.flatMap((p) => p.clusters),
    users: parsed.flatMap((p) => p.users),
    contexts: parsed.flatMap((p) => p.contexts),
    'current-context': parsed[0]?.['current-context'] ?? '',
    preferences: {},
  });
}
