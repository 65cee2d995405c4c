/**
 * Who is calling: a token (with its scopes and cluster/namespace restrictions) or an anonymous
 * reader when the configuration allows one. The same principal and the same checks serve queries,
 * subscriptions and gates.
 */
import { mayAccess } from '../store/access-rule.ts';
import type { AccessScope } from '../store/read-types.ts';
import type { ApiTokenStore } from '../store/api-token-store.ts';
import { findTokenByHash, hashToken, type TokenScope } from './tokens.ts';

/** The caller of one request or WebSocket connection. */
export interface Principal {
  kind: 'token' | 'anonymous';
  /** The token's name; `anonymous` for anonymous readers. */
  name: string;
  scopes: ReadonlySet<TokenScope>;
  access: AccessScope;
  /** For a token: aborted when this process learns the token was revoked (long-lived connections close on it). */
  revoked?: AbortSignal;
}

/** Whether the principal has `scope`; admin implies read. */
export function hasScope(principal: Principal, scope: TokenScope): boolean {
  return principal.scopes.has(scope) || (scope === 'read' && principal.scopes.has('admin'));
}

/** Whether the principal may see a phase (or, with `namespace` null, a cluster-level fact). */
export function canSee(principal: Principal, cluster: string, namespace: string | null): boolean {
  return mayAccess(
    principal.access,
    namespace === null ? { cluster, namespace, clusterLevel: true } : { cluster, namespace },
  );
}

/** Outcome of {@link Authenticator.authenticate}. */
export type AuthResult =
  | { ok: true; principal: Principal }
  | { ok: false; reason: 'MISSING_TOKEN' | 'INVALID_TOKEN' | 'MALFORMED_HEADER'; message: string };

export interface Authenticator {
  /** Authenticates an `Authorization` header value (or a bare token from WebSocket connection params). */
  authenticate(authorization: string | undefined): Promise<AuthResult>;
  /**
   * Forgets a revoked token at once: its cached verification is dropped and the `revoked` signal of
   * its principals aborts (called for revocations announced on Redis and made through this API).
   */
  revoke(name: string): void;
  /** Asks the database which tokens verified by this process are still active and revokes the others. */
  recheck(): Promise<void>;
  /** Stops the periodic re-check. */
  close(): void;
}

/** Options of {@link createAuthenticator}. */
export interface AuthenticatorOptions {
  tokens: ApiTokenStore;
  /** Let requests without a token read everything. @default false */
  anonymousRead: boolean;
  /** Called when a token's lastUsedAt write fails (it never fails a request). */
  onTouchError?: (error: unknown) => void;
  /** Shortest time between two lastUsedAt writes of one token. @default 60000 */
  touchEveryMs?: number;
  /**
   * How long a verified token is trusted without asking the database again, and how often the
   * tokens in use are re-checked. This bounds how long a token revoked where no announcement
   * reaches this process (straight in the database, or while Redis was down) keeps working,
   * including on open WebSockets. 0 disables both the cache and the re-check. @default 10000
   */
  recheckEveryMs?: number;
  /** Called when a periodic re-check fails (the next one tries again). */
  onRecheckError?: (error: unknown) => void;
}

const ANONYMOUS: Principal = {
  kind: 'anonymous',
  name: 'anonymous',
  scopes: new Set<TokenScope>(['read']),
  access: { clusters: [], namespaces: [] },
};

/** Most verified tokens kept; beyond it the oldest is dropped (tokens are few; this bounds memory). */
const MAX_CACHED = 1_000;

interface Verified {
  principal: Principal;
  tokenId: number;
  verifiedAt: number;
}

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const touchedAt = new Map<number, number>();
  const touchEveryMs = options.touchEveryMs ?? 60_000;
  const recheckEveryMs = options.recheckEveryMs ?? 10_000;
  // Verified tokens by secret hash, and one revocation signal per token name seen by this process.
  const verified = new Map<string, Verified>();
  const signals = new Map<string, AbortController>();

  const signalOf = (name: string): AbortController => {
    let controller = signals.get(name);
    if (controller === undefined || controller.signal.aborted) {
      controller = new AbortController();
      signals.set(name, controller);
    }
    return controller;
  };

  const revoke = (name: string): void => {
    for (const [hash, entry] of verified) if (entry.principal.name === name) verified.delete(hash);
    signals.get(name)?.abort();
    signals.delete(name);
  };

  const verify = async (secret: string): Promise<Verified | null> => {
    const hash = hashToken(secret);
    const now = Date.now();
    const cached = verified.get(hash);
    if (cached !== undefined && now - cached.verifiedAt < recheckEveryMs) return cached;
    const token = await findTokenByHash(options.tokens, secret, hash);
    if (token === null) {
      if (cached !== undefined) revoke(cached.principal.name);
      return null;
    }
    const entry: Verified = {
      tokenId: token.id,
      verifiedAt: now,
      principal: {
        kind: 'token',
        name: token.name,
        scopes: new Set(token.scopes.filter((s): s is TokenScope => s === 'read' || s === 'admin')),
        access: { clusters: token.clusters, namespaces: token.namespaces },
        revoked: signalOf(token.name).signal,
      },
    };
    if (recheckEveryMs > 0) {
      verified.delete(hash);
      verified.set(hash, entry);
      if (verified.size > MAX_CACHED) verified.delete(verified.keys().next().value as string);
    }
    return entry;
  };

  const recheck = async (): Promise<void> => {
    if (signals.size === 0) return;
    const active = new Set((await options.tokens.list()).filter((t) => t.revokedAt === null).map((t) => t.name));
    for (const name of [...signals.keys()]) if (!active.has(name)) revoke(name);
  };

  const timer =
    recheckEveryMs > 0
      ? setInterval(() => {
          recheck().catch((error: unknown) => options.onRecheckError?.(error));
        }, recheckEveryMs)
      : undefined;
  timer?.unref();

  return {
    async authenticate(authorization) {
      const header = authorization?.trim();
      if (!header) {
        return options.anonymousRead
          ? { ok: true, principal: ANONYMOUS }
          : {
              ok: false,
              reason: 'MISSING_TOKEN',
              message: 'an API token is required: send "Authorization: Bearer <token>"',
            };
      }
      const match = /^Bearer\s+(\S+)$/i.exec(header) ?? /^(plg_\S+)$/.exec(header);
      const secret = match?.[1];
      if (secret === undefined)
        return { ok: false, reason: 'MALFORMED_HEADER', message: 'the Authorization header must be "Bearer <token>"' };
      const entry = await verify(secret);
      if (entry === null) return { ok: false, reason: 'INVALID_TOKEN', message: 'the API token is unknown or revoked' };
      const now = Date.now();
      if (now - (touchedAt.get(entry.tokenId) ?? 0) >= touchEveryMs) {
        touchedAt.set(entry.tokenId, now);
        options.tokens.touch(entry.tokenId, new Date(now)).catch((error: unknown) => options.onTouchError?.(error));
      }
      return { ok: true, principal: entry.principal };
    },
    revoke,
    recheck,
    close: () => clearInterval(timer),
  };
}
