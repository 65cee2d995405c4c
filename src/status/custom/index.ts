/**
 * Custom health checks for custom resources: Flux CEL expressions and Argo CD Lua scripts.
 * The status engine calls `checker.evaluate(object)` before its built-in kstatus rules.
 */
export { createHealthChecker } from './health-checker.ts';
export type { HealthChecker, HealthCheckerOptions } from './health-checker.ts';
export { healthConfigSchema } from './config.ts';
export type { HealthConfig, CelHealthCheckConfig, LuaSandboxLimits } from './config.ts';
export { loadArgoCdConfigMap, readArgoCdConfigMapFile } from './argocd-cm.ts';
export type { ArgoCdHealthOverride, ArgoCdHealthOverrides } from './argocd-cm.ts';
export type { HealthLoadError, HealthLoadErrorKind } from './load-errors.ts';
