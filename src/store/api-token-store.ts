/** API tokens in the database: only sha256 hashes of secrets are stored. */
import type { Db } from './db.ts';

/** A token as stored (never the secret). */
export interface ApiTokenRecord {
  id: number;
  name: string;
  scopes: string[];
  clusters: string[];
  namespaces: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A token name that is already in use. */
export class TokenNameTakenError extends Error {
  override readonly name = 'TokenNameTakenError';
}

export interface ApiTokenStore {
  insert(token: {
    name: string;
    tokenHash: string;
    scopes: string[];
    clusters: string[];
    namespaces: string[];
  }): Promise<ApiTokenRecord>;
  list(): Promise<ApiTokenRecord[]>;
  /** Marks the token revoked; false when no unrevoked token has that name. */
  revoke(name: string, at: Date): Promise<boolean>;
  /** The unrevoked token with this name. */
  findActiveByName(name: string): Promise<ApiTokenRecord | null>;
  /** The unrevoked token with this hash. */
  findActiveByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
  touch(id: number, at: Date): Promise<void>;
  countActive(): Promise<number>;
}

const SELECT = {
  id: true,
  name: true,
  scopes: true,
  clusters: true,
  namespaces: true,
  createdAt: true,
  lastUsedAt: true,
  revokedAt: true,
} as const;

export function createApiTokenStore(db: Db): ApiTokenStore {
  return {
    async insert(token) {
      try {
        return await db.apiToken.create({ data: token, select: SELECT });
      } catch (error) {
        if ((error as { code?: string }).code === 'P2002')
          throw new TokenNameTakenError(`a token named "${token.name}" already exists`);
        throw error;
      }
    },
    list: () => db.apiToken.findMany({ orderBy: { name: 'asc' }, select: SELECT }),
    async revoke(name, at) {
      const result = await db.apiToken.updateMany({ where: { name, revokedAt: null }, data: { revokedAt: at } });
      return result.count > 0;
    },
    findActiveByName: (name) => db.apiToken.findFirst({ where: { name, revokedAt: null }, select: SELECT }),
    findActiveByHash: (tokenHash) => db.apiToken.findFirst({ where: { tokenHash, revokedAt: null }, select: SELECT }),
    async touch(id, at) {
      await db.apiToken.update({ where: { id }, data: { lastUsedAt: at } });
    },
    countActive: () => db.apiToken.count({ where: { revokedAt: null } }),
  };
}
