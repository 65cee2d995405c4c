/**
 * Who is calling: a token (with its scopes and cluster/namespace restrictions) or an anonymous
 * reader when the configuration allows one. The same principal and the same checks serve queries,
 * subscriptions and gates.
 */
import type { AccessScope } from '../store/read-types.ts';
import type { ApiTokenStore } from '../store/api-token-store.ts';
import { findTokenBySecret, type TokenScope } from './tokens.ts';

/** The caller of one request or WebSocket connection. */
export interface Principal {
  kind: 'token' | 'anonymous';
  /** The token's name; `anonymous` for anonymous readers. */
  name: string;
  scopes: ReadonlySet<TokenScope>;
  access: AccessScope;
}

/** Whether the principal has `scope`; admin implies read. */
export function hasScope(principal: Principal, scope: TokenScope): boolean {
  return principal.scopes.has(scope) || (scope === 'read' && principal.scopes.has('admin'));
}

/** Whether the principal may see a phase (or, with `namespace` null, a cluster-level fact). */
export function canSee(principal: Principal, cluster: string, namespace: string | null): boolean {
  const { clusters, namespaces } = principal.access;
  if (clusters.length > 0 && !clusters.includes(cluster)) return false;
  if (namespace !== null && namespaces.length > 0 && !namespaces.includes(namespace)) return false;
  return true;
}

/** Outcome of {@link Authenticator.authenticate}. */
export type AuthResult = { ok: true; principal: Principal } | { ok: false; reason: 'MISSING_TOKEN' | 'INVALID_TOKEN' | 'MALFORMED_HEADER'; message: string };

export interface Authenticator {
  /** Authenticates an `Authorization` header value (or a bare token from WebSocket connection params). */
  authenticate(authorization: string | undefined): Promise<AuthResult>;
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
}

const ANONYMOUS: Principal = { kind: 'anonymous', name: 'anonymous', scopes: new Set<TokenScope>(['read']), access: { clusters: [], namespaces: [] } };

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const touchedAt = new Map<number, number>();
  const touchEveryMs = options.touchEveryMs ?? 60_000;
  return {
    async authenticate(authorization) {
      const header = authorization?.trim();
      if (!header) {
        return options.anonymousRead
          ? { ok: true, principal: ANONYMOUS }
          : { ok: false, reason: 'MISSING_TOKEN', message: 'an API token is required: send "Authorization: Bearer <token>"' };
      }
      const match = /^Bearer\s+(\S+)$/i.exec(header) ?? /^(plg_\S+)$/.exec(header);
      const secret = match?.[1];
      if (secret === undefined) return { ok: false, reason: 'MALFORMED_HEADER', message: 'the Authorization header must be "Bearer <token>"' };
      const token = await findTokenBySecret(options.tokens, secret);
      if (token === null) return { ok: false, reason: 'INVALID_TOKEN', message: 'the API token is unknown or revoked' };
      const now = Date.now();
      if (now - (touchedAt.get(token.id) ?? 0) >= touchEveryMs) {
        touchedAt.set(token.id, now);
        options.tokens.touch(token.id, new Date(now)).catch((error: unknown) => options.onTouchError?.(error));
      }
      return {
        ok: true,
        principal: {
          kind: 'token',
          name: token.name,
          scopes: new Set(token.scopes.filter((s): s is TokenScope => s === 'read' || s === 'admin')),
          access: { clusters: token.clusters, namespaces: token.namespaces },
        },
      };
    },
  };
}
