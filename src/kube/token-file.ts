/**
 * Bearer tokens read from a file and re-read as soon as the file changes. client-node's own
 * token-file provider keeps a token for 60 s after reading it, so a rotated service-account token
 * (the kubelet rewrites projected tokens well before they expire) or a token file an operator
 * replaced would keep failing for up to a minute. A `stat` per request is cheap next to the
 * request itself, and the file is read again only when its identity, size or times changed.
 */
import { readFileSync, statSync } from 'node:fs';
import type https from 'node:https';
import type { KubeConfig, User } from '@kubernetes/client-node';

/** The auth-provider name phaselog gives token-file users. */
export const WATCHED_TOKEN_FILE = 'phaselog-token-file';

/** The `authProvider` value of a user whose token lives in `file`. */
export function watchedTokenFileProvider(file: string): { name: string; config: { path: string } } {
  // Not `config.tokenFile`: client-node's built-in provider would claim that key first.
  return { name: WATCHED_TOKEN_FILE, config: { path: file } };
}

interface CachedToken {
  stamp: string;
  token: string;
}

/** Registers the watched token-file provider on `kubeConfig` (before users are loaded into it). */
export function useWatchedTokenFiles(kubeConfig: KubeConfig): void {
  const cache = new Map<string, CachedToken>();
  kubeConfig.addAuthenticator({
    isAuthProvider: (user: User) => (user.authProvider as { name?: unknown } | undefined)?.name === WATCHED_TOKEN_FILE,
    applyAuthentication: async (user: User, opts: https.RequestOptions) => {
      const file = (user.authProvider as { config: { path: string } }).config.path;
      const token = readToken(file, cache);
      if (token !== '')
        opts.headers = { ...(opts.headers as Record<string, string> | undefined), Authorization: `Bearer ${token}` };
    },
  });
}

function readToken(file: string, cache: Map<string, CachedToken>): string {
  // statSync follows symlinks, so the kubelet's atomic `..data` swap shows as a new inode.
  const info = statSync(file);
  const stamp = `${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
  const cached = cache.get(file);
  if (cached !== undefined && cached.stamp === stamp) return cached.token;
  const token = readFileSync(file, 'utf8').trim();
  cache.set(file, { stamp, token });
  return token;
}
