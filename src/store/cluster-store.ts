import type { Db } from './prisma.ts';

/** A cluster as the API shows it. */
export interface ClusterRecord {
  name: string;
  labels: Record<string, string>;
  reachable: boolean | null;
  lastGoodReadAt: Date | null;
}

/** Read access to clusters. */
export interface ClusterStore {
  listClusters(): Promise<ClusterRecord[]>;
}

export function createClusterStore(db: Db): ClusterStore {
  return {
    async listClusters() {
      const rows = await db.cluster.findMany({ orderBy: { name: 'asc' } });
      return rows.map((row) => ({
        name: row.name,
        labels: (row.labels ?? {}) as Record<string, string>,
        reachable: row.reachable,
        lastGoodReadAt: row.lastGoodReadAt,
      }));
    },
  };
}
