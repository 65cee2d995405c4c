/**
 * API token functions shared by the GraphQL admin mutations and the CLI. A token's secret is shown
 * once, when it is made; the database keeps its sha256 hash. Bootstrap the first admin token with
 * {@link createTokenInDatabase} (what `phaselog token create --admin` runs), straight against the
 * database, since no token exists yet to call the API with.
 */
import { createHash, randomBytes } from 'node:crypto';
import { FULL_ACCESS, type AccessScope } from '../store/read-types.ts';
import { isAccessWithin } from '../store/access-rule.ts';
import { createApiTokenStore, type ApiTokenRecord, type ApiTokenStore } from '../store/api-token-store.ts';
import { checkDatabase } from '../store/check-database.ts';
import { migrateDatabase } from '../store/migrate.ts';
import { createDb } from '../store/prisma.ts';
import { createTokenRevocationPublisher } from '../pubsub/token-revocations.ts';

/** What a token may do: `read` every query and subscription, `admin` also manage tokens and refresh. */
export type TokenScope = 'read' | 'admin';

export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'admin'];

/** Secrets start with this, so they are easy to recognise (and to find in leaked logs). */
export const TOKEN_PREFIX = 'plg_';

/** A token as the API and CLI show it. */
export type TokenInfo = ApiTokenRecord;

/** What {@link createToken} needs. */
export interface CreateTokenInput {
  name: string;
  scopes: readonly TokenScope[];
  /** Clusters the token may see; empty or omitted: all. */
  clusters?: readonly string[];
  /** Namespaces the token may see; empty or omitted: all. */
  namespaces?: readonly string[];
}

/** Invalid input to a token function. */
export class TokenInputError extends Error {
  override readonly name = 'TokenInputError';
}

/**
 * A token manager restricted to some clusters or namespaces asked to create a token broader than
 * itself. A restricted admin manages only tokens at most as narrow as itself: else it could mint
 * an unrestricted admin token (revoking a broader one is answered as "no such token", see
 * {@link revokeToken}).
 */
export class TokenAccessError extends Error {
  override readonly name = 'TokenAccessError';
}

/** The restriction of a token manager, as words for an error message. */
function describeAccess(access: AccessScope): string {
  const parts = [
    access.clusters.length ? `clusters ${access.clusters.join(', ')}` : '',
    access.namespaces.length ? `namespaces ${access.namespaces.join(', ')}` : '',
  ];
  return parts.filter(Boolean).join(' and ');
}

/** sha256 of a secret, hex. */
export function hashToken(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new random secret: `plg_` and 32 random bytes in base64url. */
export function generateSecret(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * Creates a token; the secret is returned here and never again. `manager` is the access of whoever
 * creates it: the new token's clusters and namespaces must be within it (see {@link TokenAccessError}).
 * @param manager @default FULL_ACCESS (the database owner, as the CLI without a token)
 */
export async function createToken(
  store: ApiTokenStore,
  input: CreateTokenInput,
  manager: AccessScope = FULL_ACCESS,
): Promise<{ token: TokenInfo; secret: string }> {
  const name = input.name.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name))
    throw new TokenInputError(
      'a token name is 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit',
    );
  if (input.scopes.length === 0) throw new TokenInputError('a token needs at least one scope (read or admin)');
  for (const scope of input.scopes)
    if (!TOKEN_SCOPES.includes(scope))
      throw new TokenInputError(`unknown scope "${String(scope)}" (known: read, admin)`);
  if (!isAccessWithin({ clusters: input.clusters ?? [], namespaces: input.namespaces ?? [] }, manager)) {
    throw new TokenAccessError(
      `a token restricted to ${describeAccess(manager)} may only create tokens restricted to some of them (an empty list means all)`,
    );
  }
  const secret = generateSecret();
  const token = await store.insert({
    name,
    tokenHash: hashToken(secret),
    scopes: [...new Set(input.scopes)].sort(),
    clusters: [...new Set(input.clusters ?? [])].sort(),
    namespaces: [...new Set(input.namespaces ?? [])].sort(),
  });
  return { token, secret };
}

/**
 * Revokes a token by name and returns it as it was; null when there is no such unrevoked token
 * that `manager` may manage. A token broader than `manager` is answered as one that does not
 * exist: a restricted admin must not learn the names of tokens it cannot list.
 * @param manager @default FULL_ACCESS
 */
export async function revokeToken(
  store: ApiTokenStore,
  name: string,
  manager: AccessScope = FULL_ACCESS,
  now: Date = new Date(),
): Promise<TokenInfo | null> {
  const token = await store.findActiveByName(name);
  // A token's restriction never changes, so the check holds for the row the update below revokes.
  if (token === null || !isAccessWithin(token, manager)) return null;
  return (await store.revoke(name, now)) ? token : null;
}

/**
 * Every token, revoked ones included, by name: for a restricted `manager`, only those at most as
 * narrow as it.
 * @param manager @default FULL_ACCESS
 */
export async function listTokens(store: ApiTokenStore, manager: AccessScope = FULL_ACCESS): Promise<TokenInfo[]> {
  return (await store.list()).filter((token) => isAccessWithin(token, manager));
}

/** The unrevoked token a secret belongs to, or null. */
export async function findTokenBySecret(store: ApiTokenStore, secret: string): Promise<TokenInfo | null> {
  return findTokenByHash(store, secret, hashToken(secret));
}

/** Like {@link findTokenBySecret} when the caller already has the secret's hash. */
export async function findTokenByHash(store: ApiTokenStore, secret: string, hash: string): Promise<TokenInfo | null> {
  if (!secret.startsWith(TOKEN_PREFIX)) return null;
  return store.findActiveByHash(hash);
}

/** For the CLI: creates a token straight in the database at `databaseUrl` (bootstrap of the first admin token). */
export async function createTokenInDatabase(
  databaseUrl: string,
  input: CreateTokenInput,
): Promise<{ token: TokenInfo; secret: string }> {
  // The first admin token is often made before anything has started on a new database (the compose
  // file's `docker compose run --rm api token create`): bring the schema up to date first, as start does.
  await checkDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const db = createDb(databaseUrl, { poolSize: 1 });
  try {
    return await createToken(createApiTokenStore(db), input);
  } finally {
    await db.$disconnect();
  }
}

/** Where {@link revokeTokenInDatabase} announces a revocation: the Redis the API servers use. */
export interface RevocationAnnouncement {
  redisUrl: string;
  /** The installation's Redis prefix. @default 'phaselog' */
  prefix?: string;
}

/**
 * For the CLI: revokes a token straight in the database. With `announce`, the revocation is also
 * published on Redis so running API servers close the token's WebSockets at once; when that Redis
 * cannot be reached, they still find it at their next periodic re-check (10 s by default).
 */
export async function revokeTokenInDatabase(
  databaseUrl: string,
  name: string,
  announce?: RevocationAnnouncement,
): Promise<boolean> {
  const db = createDb(databaseUrl, { poolSize: 1 });
  let revoked: boolean;
  try {
    revoked = (await revokeToken(createApiTokenStore(db), name)) !== null;
  } finally {
    await db.$disconnect();
  }
  if (revoked && announce !== undefined) {
    const publisher = createTokenRevocationPublisher(announce.redisUrl, {
      maxConnectAttempts: 1,
      ...(announce.prefix === undefined ? {} : { prefix: announce.prefix }),
    });
    try {
      await publisher.publish(name);
    } catch {
      // Best effort: the servers' periodic re-check finds the revocation in the database.
    } finally {
      await publisher.close();
    }
  }
  return revoked;
}

/** For the CLI: lists tokens straight from the database. */
export async function listTokensInDatabase(databaseUrl: string): Promise<TokenInfo[]> {
  const db = createDb(databaseUrl, { poolSize: 1 });
  try {
    return await listTokens(createApiTokenStore(db));
  } finally {
    await db.$disconnect();
  }
}
