import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import type { HealthLoadError } from './load-errors.ts';

/** One health script declared in Argo CD's `argocd-cm`, keyed like Argo CD (`group/Kind`, `*` globs). */
export interface ArgoCdHealthOverride {
  /** `Kind` for the core group, else `group/Kind`; may hold `*` wildcards (`all` is `*\/*`). */
  key: string;
  script: string;
  /** Argo CD opens the Lua standard libraries for argocd-cm scripts only when asked. */
  useOpenLibs: boolean;
  /** The ConfigMap key the script came from, for messages and `customHealth.source`. */
  source: string;
}

/** Parsed health overrides of one argocd-cm, with the keys that could not be read. */
export interface ArgoCdHealthOverrides {
  overrides: ArgoCdHealthOverride[];
  errors: HealthLoadError[];
}

const PREFIX = 'resource.customizations';

/**
 * Argo CD's `convertToOverrideKey` (util/settings): `group_Kind` -> `group/Kind`, `Kind` stays, and
 * anything with more than one `_` is rejected; `all` means every kind.
 */
function convertOverrideKey(groupKind: string): string | undefined {
  const parts = groupKind.split('_');
  let key: string | undefined;
  if (parts.length === 2) key = `${parts[0]}/${parts[1]}`;
  else if (parts.length === 1 && groupKind !== '') key = groupKind;
  return key === 'all' ? '*/*' : key;
}

interface Draft {
  script?: string;
  useOpenLibs: boolean;
  source: string;
}

function readYamlForm(text: string, drafts: Map<string, Draft>, errors: HealthLoadError[]): void {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (error) {
    errors.push({
      kind: 'INVALID_ARGOCD_CONFIG',
      source: PREFIX,
      message: `not valid YAML: ${(error as Error).message}`,
    });
    return;
  }
  if (parsed === null || parsed === undefined) return;
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    errors.push({
      kind: 'INVALID_ARGOCD_CONFIG',
      source: PREFIX,
      message: 'must be a map of group/Kind to customizations',
    });
    return;
  }
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (value === null || typeof value !== 'object') continue;
    const entry = value as Record<string, unknown>;
    const script = entry['health.lua'];
    if (typeof script !== 'string' || script.trim() === '') continue;
    const openLibs = entry['health.lua.useOpenLibs'];
    drafts.set(key, { script, useOpenLibs: openLibs === true || openLibs === 'true', source: `${PREFIX}[${key}]` });
  }
}

/** Go's strconv.ParseBool, which Argo CD uses for `useOpenLibs` keys. */
function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}

/**
 * Reads the health scripts of an `argocd-cm` data map, as Argo CD's settings manager does: first the
 * `resource.customizations` YAML block (`health.lua`, `health.lua.useOpenLibs`), then the split keys
 * `resource.customizations.health.<group>_<Kind>` and `resource.customizations.useOpenLibs.<group>_<Kind>`,
 * which win. Works the same for a file and for a ConfigMap read from a cluster.
 */
export function loadArgoCdConfigMap(data: Record<string, string>): ArgoCdHealthOverrides {
  const drafts = new Map<string, Draft>();
  const errors: HealthLoadError[] = [];
  const block = data[PREFIX];
  if (typeof block === 'string') readYamlForm(block, drafts, errors);
  for (const [configKey, value] of Object.entries(data)) {
    if (!configKey.startsWith(`${PREFIX}.`)) continue;
    const parts = configKey.split('.');
    if (parts.length < 4) continue;
    const type = parts[2];
    if (type !== 'health' && type !== 'useOpenLibs') continue;
    const key = convertOverrideKey(parts.slice(3).join('.'));
    if (key === undefined) {
      errors.push({
        kind: 'INVALID_ARGOCD_CONFIG',
        source: configKey,
        message:
          'group kind should be in format resource.customizations.<type>.<group_kind> or resource.customizations.<type>.<kind>',
      });
      continue;
    }
    const draft = drafts.get(key) ?? { useOpenLibs: false, source: configKey };
    if (type === 'health') {
      draft.script = value;
      draft.source = configKey;
    } else {
      const flag = parseGoBool(String(value));
      if (flag === undefined) {
        errors.push({ kind: 'INVALID_ARGOCD_CONFIG', source: configKey, message: `not a boolean: ${String(value)}` });
        continue;
      }
      draft.useOpenLibs = flag;
    }
    drafts.set(key, draft);
  }
  const overrides: ArgoCdHealthOverride[] = [];
  for (const [key, draft] of drafts) {
    if (draft.script === undefined || draft.script.trim() === '') continue;
    overrides.push({ key, script: draft.script, useOpenLibs: draft.useOpenLibs, source: draft.source });
  }
  return { overrides, errors };
}

/**
 * Reads an argocd-cm from a YAML or JSON file holding either the whole ConfigMap or only its `data`
 * map. A file that cannot be read or has the wrong shape is reported, never thrown.
 */
export async function readArgoCdConfigMapFile(path: string): Promise<ArgoCdHealthOverrides> {
  let parsed: unknown;
  try {
    parsed = parseYaml(await readFile(path, 'utf8'));
  } catch (error) {
    return { overrides: [], errors: [{ kind: 'READ_FAILED', source: path, message: (error as Error).message }] };
  }
  const record =
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  const data = record && record['kind'] === 'ConfigMap' ? (record['data'] ?? {}) : record;
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return {
      overrides: [],
      errors: [{ kind: 'INVALID_ARGOCD_CONFIG', source: path, message: 'expected a ConfigMap or its data map' }],
    };
  }
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (typeof value === 'string') strings[key] = value;
    else if (typeof value === 'boolean' || typeof value === 'number') strings[key] = String(value);
  }
  const loaded = loadArgoCdConfigMap(strings);
  return {
    overrides: loaded.overrides.map((o) => ({ ...o, source: `${path}#${o.source}` })),
    errors: loaded.errors.map((e) => ({ ...e, source: `${path}#${e.source}` })),
  };
}
