/** Why a configured health check could not be loaded. */
export type HealthLoadErrorKind =
  'CEL_PARSE_ERROR' | 'LUA_SYNTAX_ERROR' | 'DUPLICATE_CHECK' | 'INVALID_ARGOCD_CONFIG' | 'READ_FAILED';

/**
 * A health check that was skipped at load time. `source` names the file (with `line` when Lua
 * reported one), the argocd-cm key, or the config path such as `health.healthCheckExprs[2].current`.
 */
export interface HealthLoadError {
  kind: HealthLoadErrorKind;
  source: string;
  line?: number;
  message: string;
}
