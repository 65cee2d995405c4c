import { isAbsolute, resolve } from 'node:path';
import type { StatusResult } from '../types.ts';
import { readArgoCdConfigMapFile } from './argocd-cm.ts';
import type { ArgoCdHealthOverrides } from './argocd-cm.ts';
import { compileCelCheck } from './cel-check.ts';
import type { CelCheck } from './cel-check.ts';
import { createFluxCelEnvironment } from './cel-env.ts';
import type { HealthConfig } from './config.ts';
import { compareKeyPatterns, compileKeyPattern, formatArgoKey, readGroup, readGroupKind } from './group-kind.ts';
import type { KeyPattern } from './group-kind.ts';
import type { HealthLoadError } from './load-errors.ts';
import { readLuaDirectory } from './lua-directories.ts';
import { LuaRuntime } from './lua-runtime.ts';
import type { LuaScriptHandle } from './lua-runtime.ts';
import { buildCustomResult, buildErrorResult, isArgoHealthStatus, mapArgoHealth } from './result.ts';

/**
 * User-supplied health checks for custom resources, consulted by the status engine before its
 * built-in kstatus rules. Evaluation is synchronous and never throws.
 */
export interface HealthChecker {
  /** The final result when a custom check matches the object's apiVersion/kind, else undefined. */
  evaluate(object: Record<string, unknown>): StatusResult | undefined;
  /** Whether any custom check would handle this apiVersion/kind. */
  matches(apiVersion: string, kind: string): boolean;
  /** Frees the Lua state. Later evaluations of Lua checks report Unknown. */
  close(): void;
}

/** Options for {@link createHealthChecker}. */
export interface HealthCheckerOptions {
  /** Directory relative paths in the config are resolved against (the config file's directory). */
  baseDir: string;
  /** argocd-cm data already parsed with `loadArgoCdConfigMap` (e.g. read from a cluster); ranks after the configured file. */
  argocdConfigMaps?: ArgoCdHealthOverrides[];
}

interface LuaCheck {
  handle: LuaScriptHandle;
  source: string;
  useOpenLibs: boolean;
}

type Rule = { engine: 'cel'; check: CelCheck } | { engine: 'lua'; check: LuaCheck };

interface LuaCandidate {
  key: string;
  script: string;
  source: string;
  useOpenLibs: boolean;
  tier: 'configmap' | 'directory';
}

/** Lua rules in Argo CD's lookup order: argocd-cm exact, argocd-cm wildcard, folder exact, folder wildcard. */
interface LuaTable {
  configExact: Map<string, LuaCheck>;
  configWildcard: { pattern: KeyPattern; check: LuaCheck }[];
  folderExact: Map<string, LuaCheck>;
  folderWildcard: { pattern: KeyPattern; check: LuaCheck }[];
}

function compileCelRules(config: HealthConfig, errors: HealthLoadError[]): Map<string, CelCheck> {
  const env = createFluxCelEnvironment();
  const rules = new Map<string, CelCheck>();
  config.healthCheckExprs.forEach((entry, index) => {
    const source = `health.healthCheckExprs[${index}]`;
    const groupKind = `${readGroup(entry.apiVersion)}/${entry.kind ?? ''}`;
    if (rules.has(groupKind)) {
      errors.push({
        kind: 'DUPLICATE_CHECK',
        source,
        message: `duplicate custom health check for GroupKind ${groupKind}`,
      });
      return;
    }
    const { check, errors: compileErrors } = compileCelCheck(env, entry, source);
    for (const e of compileErrors) errors.push({ kind: 'CEL_PARSE_ERROR', source: e.path, message: e.message });
    if (check) rules.set(groupKind, check);
  });
  return rules;
}

async function collectLuaCandidates(
  config: HealthConfig,
  options: HealthCheckerOptions,
  errors: HealthLoadError[],
): Promise<LuaCandidate[]> {
  const toPath = (p: string) => (isAbsolute(p) ? p : resolve(options.baseDir, p));
  const maps: ArgoCdHealthOverrides[] = [];
  if (config.argocdConfigMap !== undefined) maps.push(await readArgoCdConfigMapFile(toPath(config.argocdConfigMap)));
  maps.push(...(options.argocdConfigMaps ?? []));
  const candidates: LuaCandidate[] = [];
  for (const map of maps) {
    errors.push(...map.errors);
    for (const o of map.overrides) candidates.push({ ...o, tier: 'configmap' });
  }
  for (const dir of config.luaDirectories) {
    const found = await readLuaDirectory(toPath(dir));
    errors.push(...found.errors);
    for (const s of found.scripts) {
      candidates.push({ key: s.key, script: s.script, source: s.file, useOpenLibs: true, tier: 'directory' });
    }
  }
  return candidates;
}

function buildLuaTable(runtime: LuaRuntime, candidates: LuaCandidate[], errors: HealthLoadError[]): LuaTable {
  const table: LuaTable = { configExact: new Map(), configWildcard: [], folderExact: new Map(), folderWildcard: [] };
  for (const c of candidates) {
    const exact = c.tier === 'configmap' ? table.configExact : table.folderExact;
    // Earlier sources win: the argocd-cm file before passed maps, directories in listed order.
    if (!c.key.includes('*') && exact.has(c.key)) continue;
    const compiled = runtime.compile(c.script, c.source);
    if (!('id' in compiled)) {
      errors.push({ kind: 'LUA_SYNTAX_ERROR', source: c.source, line: compiled.line, message: compiled.message });
      continue;
    }
    const check: LuaCheck = { handle: compiled, source: c.source, useOpenLibs: c.useOpenLibs };
    if (!c.key.includes('*')) exact.set(c.key, check);
    else
      (c.tier === 'configmap' ? table.configWildcard : table.folderWildcard).push({
        pattern: compileKeyPattern(c.key),
        check,
      });
  }
  // Stable sort keeps source order among equally specific patterns.
  table.configWildcard.sort((a, b) => compareKeyPatterns(a.pattern, b.pattern));
  table.folderWildcard.sort((a, b) => compareKeyPatterns(a.pattern, b.pattern));
  return table;
}

function findLua(table: LuaTable, key: string): LuaCheck | undefined {
  return (
    table.configExact.get(key) ??
    table.configWildcard.find((w) => w.pattern.regex.test(key))?.check ??
    table.folderExact.get(key) ??
    table.folderWildcard.find((w) => w.pattern.regex.test(key))?.check
  );
}

/**
 * Argo CD's result handling (util/lua `ExecuteHealthLua`): a status outside the six codes is
 * Unknown "Lua returned an invalid health status"; errors become Unknown with HEALTH_CHECK_ERROR.
 */
function evaluateLua(runtime: LuaRuntime, check: LuaCheck, object: Record<string, unknown>): StatusResult {
  const outcome = runtime.run(check.handle, object, check.useOpenLibs);
  if (!outcome.ok) return buildErrorResult('lua', check.source, outcome.error);
  if (!isArgoHealthStatus(outcome.status)) {
    const result = buildErrorResult('lua', check.source, 'Lua returned an invalid health status');
    return {
      ...result,
      customHealth: { engine: 'lua', source: check.source, health: outcome.status, message: outcome.message },
    };
  }
  const { status, reason } = mapArgoHealth(outcome.status);
  return buildCustomResult(status, reason, {
    engine: 'lua',
    source: check.source,
    health: outcome.status,
    message: outcome.message,
  });
}

/**
 * Loads every configured health check once: CEL expressions are parsed, Lua scripts compiled.
 * Checks that fail to load are left out and reported in `errors` (file and line, argocd-cm key or
 * config path); the rest work.
 *
 * Precedence for an object's group and kind, first match wins:
 * 1. CEL (`healthCheckExprs`, declared explicitly in phaselog.yaml): the kind-specific entry, then the
 *    group-wide entry (no `kind`), as in Flux.
 * 2. Lua in Argo CD's order: argocd-cm exact key, argocd-cm wildcard, folder exact, folder wildcard.
 *    Among wildcards the most specific wins (most literal characters, then fewest `*`, then name);
 *    among equal exact keys the argocd-cm file beats passed maps, and directories rank in listed order.
 * A matching check replaces the built-in kstatus rule for that kind, as Flux's custom readers do.
 */
export async function createHealthChecker(
  config: HealthConfig,
  options: HealthCheckerOptions,
): Promise<{ checker: HealthChecker; errors: HealthLoadError[] }> {
  const errors: HealthLoadError[] = [];
  const celRules = compileCelRules(config, errors);
  const candidates = await collectLuaCandidates(config, options, errors);
  const runtime = candidates.length > 0 ? await LuaRuntime.create(config.lua) : undefined;
  const luaTable = runtime ? buildLuaTable(runtime, candidates, errors) : undefined;
  const resolved = new Map<string, Rule | null>();

  const resolveRule = (group: string, kind: string): Rule | null => {
    const cacheKey = `${group}/${kind}`;
    const cached = resolved.get(cacheKey);
    if (cached !== undefined) return cached;
    const cel = celRules.get(cacheKey) ?? celRules.get(`${group}/`);
    const lua = cel || !luaTable ? undefined : findLua(luaTable, formatArgoKey(group, kind));
    const rule: Rule | null = cel ? { engine: 'cel', check: cel } : lua ? { engine: 'lua', check: lua } : null;
    resolved.set(cacheKey, rule);
    return rule;
  };

  const checker: HealthChecker = {
    evaluate(object) {
      const gk = readGroupKind(object);
      if (!gk) return undefined;
      const rule = resolveRule(gk.group, gk.kind);
      if (!rule) return undefined;
      if (rule.engine === 'cel') return rule.check.evaluate(object);
      return runtime ? evaluateLua(runtime, rule.check, object) : undefined;
    },
    matches(apiVersion, kind) {
      return resolveRule(readGroup(apiVersion), kind) !== null;
    },
    close() {
      runtime?.close();
    },
  };
  return { checker, errors };
}
