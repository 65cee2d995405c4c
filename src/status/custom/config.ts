import { z } from 'zod';

/**
 * One Flux health check expression set (kustomize-controller `spec.healthCheckExprs[]`, fluxcd/pkg
 * `apis/kustomize.CustomHealthCheck`). Only the group of `apiVersion` is matched; an empty `kind`
 * applies to every kind of that group.
 */
export const celHealthCheckSchema = z.strictObject({
  apiVersion: z.string().min(1, 'apiVersion is required'),
  kind: z.string().optional(),
  current: z.string().min(1, 'current expression is required'),
  inProgress: z.string().optional(),
  failed: z.string().optional(),
});

/** Limits applied to every Lua health script evaluation. */
export const luaSandboxSchema = z.strictObject({
  /** VM instructions one evaluation may run. @default 1000000 */
  instructionLimit: z.number().int().positive().default(1_000_000),
  /** Memory a script may allocate on top of the compiled scripts, in MiB. @default 64 */
  memoryLimitMiB: z.number().positive().default(64),
  /** Wall-clock limit of one evaluation, in milliseconds (Argo CD uses 1 s). @default 1000 */
  timeoutMs: z.number().int().positive().default(1000),
});

/**
 * The `health` section of `phaselog.yaml`: user-supplied health checks for custom resources.
 * Relative paths are resolved against the directory of the configuration file.
 */
export const healthConfigSchema = z.strictObject({
  /** Flux-style CEL checks, same fields as `Kustomization.spec.healthCheckExprs`. */
  healthCheckExprs: z.array(celHealthCheckSchema).default([]),
  /** Directories laid out like Argo CD's `resource_customizations/<group>/<Kind>/health.lua`. */
  luaDirectories: z.array(z.string().min(1)).default([]),
  /** A file holding Argo CD's `argocd-cm` ConfigMap (or just its `data` map) as YAML or JSON. */
  argocdConfigMap: z.string().min(1).optional(),
  /** Sandbox limits for Lua scripts. */
  lua: luaSandboxSchema.default({ instructionLimit: 1_000_000, memoryLimitMiB: 64, timeoutMs: 1000 }),
});

/** Parsed `health` configuration (defaults applied). */
export type HealthConfig = z.infer<typeof healthConfigSchema>;

/** One parsed CEL health check entry. */
export type CelHealthCheckConfig = z.infer<typeof celHealthCheckSchema>;

/** Lua sandbox limits. */
export type LuaSandboxLimits = z.infer<typeof luaSandboxSchema>;
