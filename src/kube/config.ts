/**
 * The `clusters:` section of phaselog's config, for the config module to embed. Each entry is one
 * of three shapes:
 * - `kubeconfig` (path) with an optional `context`; without `context`, every context of the file
 *   (or those in `contexts`) becomes a cluster named after its context;
 * - `server` with `token` or `tokenFile`, and `caFile` or `insecureSkipTLSVerify`;
 * - `inCluster: true`, the pod's service account.
 * Client certificates and exec plugins are configured through a kubeconfig.
 */
import { z } from 'zod';

/** Where the kubelet mounts a pod's service-account token, CA bundle and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const labelsSchema = z.record(z.string(), z.string()).default({});

/** One entry of `clusters:`. */
export const clusterEntrySchema = z
  .object({
    name: z.string().min(1).optional().describe('Cluster name; required except for whole-kubeconfig entries'),
    labels: labelsSchema.describe('Labels to group and filter clusters by'),
    kubeconfig: z.string().min(1).optional().describe('Path of a kubeconfig file'),
    context: z.string().min(1).optional().describe('One context of that kubeconfig'),
    contexts: z.array(z.string().min(1)).optional().describe('A subset of its contexts (each becomes a cluster)'),
    server: z.url().optional().describe('API server URL'),
    token: z.string().min(1).optional().describe('Bearer token (prefer tokenFile)'),
    tokenFile: z.string().min(1).optional().describe('File holding a bearer token, re-read when it changes'),
    caFile: z.string().min(1).optional().describe('CA bundle for the server certificate'),
    insecureSkipTLSVerify: z.boolean().optional().describe('Skip server certificate checks (testing only)'),
    inCluster: z.literal(true).optional().describe('Use the pod service account'),
  })
  .strict()
  .superRefine((entry, ctx) => {
    const modes = [entry.kubeconfig !== undefined, entry.server !== undefined, entry.inCluster === true].filter(
      Boolean,
    ).length;
    if (modes !== 1) {
      ctx.addIssue({ code: 'custom', message: 'set exactly one of kubeconfig, server or inCluster' });
      return;
    }
    if (entry.kubeconfig !== undefined) {
      if (entry.context !== undefined && entry.contexts !== undefined)
        ctx.addIssue({ code: 'custom', message: 'set context or contexts, not both', path: ['contexts'] });
      if (entry.context !== undefined && entry.name === undefined)
        ctx.addIssue({ code: 'custom', message: 'a single-context entry needs a name', path: ['name'] });
      if (entry.context === undefined && entry.name !== undefined)
        ctx.addIssue({
          code: 'custom',
          message: 'name applies to one context; set context, or drop name to use context names',
          path: ['name'],
        });
    }
    if (entry.kubeconfig === undefined) {
      for (const key of ['context', 'contexts'] as const) {
        if (entry[key] !== undefined) ctx.addIssue({ code: 'custom', message: `${key} needs kubeconfig`, path: [key] });
      }
      if (entry.name === undefined) ctx.addIssue({ code: 'custom', message: 'name is required', path: ['name'] });
    }
    if (entry.server !== undefined) {
      if (entry.token !== undefined && entry.tokenFile !== undefined)
        ctx.addIssue({ code: 'custom', message: 'set token or tokenFile, not both', path: ['tokenFile'] });
    } else {
      for (const key of ['token', 'tokenFile', 'caFile', 'insecureSkipTLSVerify'] as const) {
        if (entry[key] !== undefined) ctx.addIssue({ code: 'custom', message: `${key} needs server`, path: [key] });
      }
    }
  });

/** The whole `clusters:` list; entry names must be unique. */
export const clustersConfigSchema = z.array(clusterEntrySchema).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (entry.name === undefined) return;
    if (seen.has(entry.name))
      ctx.addIssue({ code: 'custom', message: `duplicate cluster name "${entry.name}"`, path: [index, 'name'] });
    seen.add(entry.name);
  });
});

/** One validated cluster entry. */
export type ClusterEntry = z.infer<typeof clusterEntrySchema>;
/** The validated `clusters:` list. */
export type ClustersConfig = z.infer<typeof clustersConfigSchema>;
