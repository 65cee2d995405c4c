/**
 * Reads kubeconfig files the way kubectl does (client-go's clientcmd loading rules), because
 * client-node's `loadFromDefault` differs where users notice: it throws on a missing file in a
 * `KUBECONFIG` list and on a name two files share, and lets the last file's `current-context` win.
 * kubectl's rules, implemented here:
 * - files are read in order; a file that does not exist is skipped;
 * - the first file to define a cluster, user or context name wins (later definitions are ignored);
 * - `current-context` comes from the first file that sets it;
 * - relative paths (`certificate-authority`, `client-certificate`, `client-key`, `tokenFile`, an
 *   exec `command` with a slash) resolve against the folder of the file that names them;
 * - a file that exists but cannot be read or parsed is an error naming that file.
 * A user's `tokenFile` (which client-node ignores) is honoured and re-read when it changes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
// config.js, not the package's main entry, which loads the whole generated API client (see lean-client-node.ts).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import type { Cluster, Context, User } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { useWatchedTokenFiles, watchedTokenFileProvider } from './token-file.ts';

/** A kubeconfig file that exists but cannot be used, or a list of which none exists. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
  constructor(
    message: string,
    /** The file at fault, when there is one. */
    readonly file?: string,
  ) {
    super(message);
  }
}

/** The merged result of {@link readKubeconfigFiles}. */
export interface MergedKubeconfig {
  kubeConfig: KubeConfig;
  /** Files that were read, in order. */
  files: string[];
  /** Files of the list that do not exist (skipped, as kubectl does). */
  missing: string[];
}

/** Splits a `KUBECONFIG` value (`a:b:c` on Unix) into its files, dropping empty entries. */
export function splitKubeconfigPaths(value: string): string[] {
  return value.split(path.delimiter).filter((entry) => entry !== '');
}

/**
 * Reads and merges kubeconfig files with kubectl's precedence.
 * @throws KubeconfigError naming a file that exists but cannot be read or parsed, or listing the
 *   files when none of them exists
 */
export function readKubeconfigFiles(files: string[]): MergedKubeconfig {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let currentContext: string | undefined;
  const read: string[] = [];
  const missing: string[] = [];
  for (const file of files) {
    const part = readOneFile(file);
    if (part === undefined) {
      missing.push(file);
      continue;
    }
    read.push(file);
    for (const cluster of part.clusters) if (!clusters.has(cluster.name)) clusters.set(cluster.name, cluster);
    for (const user of part.users) if (!users.has(user.name)) users.set(user.name, user);
    for (const context of part.contexts) if (!contexts.has(context.name)) contexts.set(context.name, context);
    if (currentContext === undefined && part.currentContext !== '') currentContext = part.currentContext;
  }
  if (read.length === 0) {
    throw new KubeconfigError(
      files.length === 1
        ? `kubeconfig ${files[0]} does not exist`
        : `none of the kubeconfig files exists: ${files.join(', ')}`,
      files[0],
    );
  }
  const kubeConfig = new KubeConfig();
  useWatchedTokenFiles(kubeConfig);
  kubeConfig.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext: currentContext ?? '',
  });
  return { kubeConfig, files: read, missing };
}

interface FilePart {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext: string;
}

/** One file's entries with paths made absolute; `undefined` when the file does not exist. */
function readOneFile(file: string): FilePart | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new KubeconfigError(`cannot read kubeconfig ${file}: ${(error as Error).message}`, file);
  }
  let raw: unknown;
  const single = new KubeConfig();
  try {
    raw = parseYaml(text);
    // An empty file (or one of comments only) is an empty config to kubectl; client-node would throw.
    if (raw === null || raw === undefined) return { clusters: [], users: [], contexts: [], currentContext: '' };
    single.loadFromString(text);
  } catch (error) {
    // The first line only: the YAML parser's next lines quote the file, which may hold a token.
    throw new KubeconfigError(`cannot parse kubeconfig ${file}: ${firstLine(error)}`, file);
  }
  const dir = path.dirname(path.resolve(file));
  single.makePathsAbsolute(dir);
  const rawUsers = new Map<string, Record<string, unknown>>();
  if (isRecord(raw) && Array.isArray(raw.users)) {
    for (const entry of raw.users as unknown[]) {
      if (isRecord(entry) && typeof entry.name === 'string' && isRecord(entry.user))
        rawUsers.set(entry.name, entry.user);
    }
  }
  const users = single.getUsers().map((user) => withFileReferences(user, rawUsers.get(user.name), dir));
  return {
    clusters: [...single.getClusters()],
    users,
    contexts: [...single.getContexts()],
    currentContext: single.getCurrentContext() ?? '',
  };
}

/**
 * Adds what client-node leaves out of a user: `tokenFile` (re-read on change), and an exec
 * `command` given as a relative path (clientcmd resolves it against the kubeconfig's folder
 * only when it contains a separator; a bare name is looked up on PATH).
 */
function withFileReferences(user: User, raw: Record<string, unknown> | undefined, dir: string): User {
  let result: User = user;
  const tokenFile = raw?.tokenFile;
  if (
    typeof tokenFile === 'string' &&
    tokenFile !== '' &&
    user.token === undefined &&
    user.authProvider === undefined
  ) {
    result = { ...result, authProvider: watchedTokenFileProvider(path.resolve(dir, tokenFile)) };
  }
  const legacyTokenFile = (user.authProvider as { config?: { tokenFile?: unknown } } | undefined)?.config?.tokenFile;
  if (typeof legacyTokenFile === 'string' && legacyTokenFile !== '') {
    result = { ...result, authProvider: watchedTokenFileProvider(path.resolve(dir, legacyTokenFile)) };
  }
  const exec = user.exec as { command?: unknown } | undefined;
  if (
    exec !== undefined &&
    typeof exec.command === 'string' &&
    exec.command.includes(path.sep) &&
    !path.isAbsolute(exec.command)
  ) {
    result = { ...result, exec: { ...exec, command: path.resolve(dir, exec.command) } };
  }
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
