/**
 * The applier's own status of each member (EMCO's rsync-status): cli-utils ConfigMap, kpt
 * ResourceGroup and Argo CD Application inventories on an emulated cluster, snapshotted into real
 * Postgres, read back over the real GraphQL server as Resource.applied, Phase.appliedSummary,
 * statusAt and the change log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChangePublisher, type ChangePublisher } from '../../../src/pubsub/change-publisher.ts';
import { createRecorder } from '../../../src/snapshot/record.ts';
import { snapshotCluster, type SnapshotDeps } from '../../../src/snapshot/snapshot-cluster.ts';
import { createSnapshotStore } from '../../../src/store/snapshot-store.ts';
import { readyDeployment } from '../snapshot/fleet.ts';
import {
  countRows,
  createTestDatabase,
  REDIS_URL,
  startEmulatedCluster,
  testLogger,
  uniqueId,
  type EmulatedCluster,
  type TestDatabase,
} from '../snapshot/helpers.ts';
import { gqlData, startTestApi, type TestApi } from './helpers.ts';

const INVENTORY_ID = 'cli-utils.sigs.k8s.io/inventory-id';

function cliUtilsInventory(values: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'inventory-12345678', namespace: 'shop', labels: { [INVENTORY_ID]: 'shop' } },
    data: values,
  };
}

const PENDING = '{"strategy":"Apply","actuation":"Pending","reconcile":"Pending"}';
const SUCCEEDED = '{"strategy":"Apply","actuation":"Succeeded","reconcile":"Succeeded"}';

const resourceGroup = {
  apiVersion: 'kpt.dev/v1alpha1',
  kind: 'ResourceGroup',
  metadata: { name: 'infra', namespace: 'infra', labels: { [INVENTORY_ID]: 'infra-id' } },
  spec: {
    resources: [
      { group: 'apps', kind: 'Deployment', namespace: 'infra', name: 'dns' },
      { group: 'apps', kind: 'Deployment', namespace: 'infra', name: 'proxy' },
    ],
  },
  status: {
    resourceStatuses: [
      {
        group: 'apps',
        kind: 'Deployment',
        namespace: 'infra',
        name: 'dns',
        status: 'Current',
        strategy: 'Apply',
        actuation: 'Succeeded',
        reconcile: 'Succeeded',
      },
      {
        group: 'apps',
        kind: 'Deployment',
        namespace: 'infra',
        name: 'proxy',
        status: 'Unknown',
        strategy: 'Apply',
        actuation: 'Failed',
        reconcile: 'Skipped',
      },
    ],
  },
};

const application = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: { name: 'web', namespace: 'argocd' },
  status: {
    resources: [
      { group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'web', name: 'front', status: 'Synced' },
      { group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'web', name: 'back', status: 'OutOfSync' },
    ],
  },
};

interface Applied {
  strategy: string | null;
  actuation: string | null;
  reconcile: string | null;
  sync: string | null;
}
interface Count {
  value: string;
  count: number;
}
interface AppliedSummary {
  strategy: Count[];
  actuation: Count[];
  reconcile: Count[];
  sync: Count[];
}
interface PhaseAnswer {
  appliedSummary: AppliedSummary | null;
  resources: { edges: { node: { name: string; status: string; applied: Applied | null } }[] };
}

const APPLIED = 'applied { strategy actuation reconcile sync }';
const SUMMARY =
  'appliedSummary { strategy { value count } actuation { value count } reconcile { value count } sync { value count } }';
const PHASE = `query P($ns: String!, $name: String!) { phase(cluster: "east", namespace: $ns, name: $name) {
  ${SUMMARY} resources { edges { node { name status ${APPLIED} } } } } }`;
const PHASE_AT = `query P($ns: String!, $name: String!, $at: DateTime!) { phase(cluster: "east", namespace: $ns, name: $name) {
  statusAt(at: $at) { ${SUMMARY} resources { edges { node { name status ${APPLIED} } } } } } }`;
const CHANGES = `query C($ns: String!, $name: String!) { phase(cluster: "east", namespace: $ns, name: $name) {
  changes(first: 100) { edges { node { resourceKey fromStatus toStatus message } } } } }`;

let database: TestDatabase;
let cluster: EmulatedCluster;
let publisher: ChangePublisher;
let deps: SnapshotDeps;
let api: TestApi;
let tick = Date.UTC(2026, 2, 1);
const snapshot = async (): Promise<Date> => {
  const at = new Date((tick += 30_000));
  await snapshotCluster(deps, cluster.client, at);
  return at;
};
const phase = async (ns: string, name: string) =>
  (await gqlData<{ phase: PhaseAnswer }>(api.url, PHASE, { ns, name })).phase;
const byName = (p: { resources: PhaseAnswer['resources'] }) =>
  Object.fromEntries(p.resources.edges.map((e) => [e.node.name, e.node.applied]));

beforeAll(async () => {
  const prefix = uniqueId('applied');
  database = await createTestDatabase('applied');
  cluster = await startEmulatedCluster('east');
  cluster.emulator.apply([
    readyDeployment('shop', 'api'),
    readyDeployment('shop', 'cart'),
    readyDeployment('shop', 'mail'),
    readyDeployment('infra', 'dns'),
    readyDeployment('infra', 'proxy'),
    readyDeployment('web', 'front'),
    readyDeployment('web', 'back'),
    cliUtilsInventory({
      shop_api_apps_Deployment: PENDING,
      shop_cart_apps_Deployment: SUCCEEDED,
      // Written by a tool phaselog does not know: kept as written; the number is an inventory error.
      shop_mail_apps_Deployment: '{"strategy":"Apply","actuation":7,"reconcile":"Superseded"}',
    }),
    resourceGroup,
    application,
  ]);
  publisher = createChangePublisher(REDIS_URL, { prefix });
  deps = {
    recorder: createRecorder(createSnapshotStore(database.db)),
    publisher,
    log: testLogger(),
    observe: { now: () => new Date(tick) },
  };
  api = await startTestApi({ db: database.db });
});

afterAll(async () => {
  await api?.close();
  await publisher?.close();
  await cluster?.close();
  await database?.drop();
});

describe('the applier status of each member', () => {
  let pendingAt: Date;

  it('reaches Resource.applied and Phase.appliedSummary from a cli-utils ConfigMap, values as written', async () => {
    pendingAt = await snapshot();
    const shop = await phase('shop', 'shop');
    expect(byName(shop)).toEqual({
      api: { strategy: 'Apply', actuation: 'Pending', reconcile: 'Pending', sync: null },
      cart: { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Succeeded', sync: null },
      mail: { strategy: 'Apply', actuation: null, reconcile: 'Superseded', sync: null },
    });
    // The members' own kstatus status is what it was: the applier status sits beside it.
    expect(shop.resources.edges.map((e) => e.node.status)).toEqual(['Current', 'Current', 'Current']);
    expect(shop.appliedSummary).toEqual({
      strategy: [{ value: 'Apply', count: 3 }],
      actuation: [
        { value: 'Pending', count: 1 },
        { value: 'Succeeded', count: 1 },
      ],
      reconcile: [
        { value: 'Pending', count: 1 },
        { value: 'Succeeded', count: 1 },
        { value: 'Superseded', count: 1 },
      ],
      sync: [],
    });
  });

  it('reaches them from a kpt ResourceGroup (status.resourceStatuses) and an Argo CD Application (sync)', async () => {
    const infra = await phase('infra', 'infra');
    expect(byName(infra)).toEqual({
      dns: { strategy: 'Apply', actuation: 'Succeeded', reconcile: 'Succeeded', sync: null },
      proxy: { strategy: 'Apply', actuation: 'Failed', reconcile: 'Skipped', sync: null },
    });
    expect(infra.appliedSummary?.actuation).toEqual([
      { value: 'Failed', count: 1 },
      { value: 'Succeeded', count: 1 },
    ]);
    const web = await phase('argocd', 'web');
    expect(byName(web)).toEqual({
      back: { strategy: null, actuation: null, reconcile: null, sync: 'OutOfSync' },
      front: { strategy: null, actuation: null, reconcile: null, sync: 'Synced' },
    });
    expect(web.appliedSummary).toEqual({
      strategy: [],
      actuation: [],
      reconcile: [],
      sync: [
        { value: 'OutOfSync', count: 1 },
        { value: 'Synced', count: 1 },
      ],
    });
  });

  it('records Pending → Succeeded once, keeps it on an unchanged tick, and statusAt before it says Pending', async () => {
    const resourceChanges = async () =>
      Number(
        (
          await database.db.$queryRawUnsafe<{ n: bigint }[]>(
            `SELECT count(*) AS n FROM "StatusChange" WHERE "scope" = 'resource'`,
          )
        )[0]?.n ?? 0,
      );
    const before = { rows: await countRows(database.db), changes: await resourceChanges() };
    cluster.emulator.apply([
      cliUtilsInventory({
        shop_api_apps_Deployment: SUCCEEDED,
        shop_cart_apps_Deployment: SUCCEEDED,
        shop_mail_apps_Deployment: '{"strategy":"Apply","actuation":7,"reconcile":"Superseded"}',
      }),
    ]);
    const succeededAt = await snapshot();
    const after = { rows: await countRows(database.db), changes: await resourceChanges() };
    // One member's interval closed and reopened, one resource change row; nothing else of the members.
    expect(after.rows.ResourceStatusInterval - before.rows.ResourceStatusInterval).toBe(1);
    expect(after.changes - before.changes).toBe(1);
    await snapshot();
    const unchanged = await countRows(database.db);
    expect(unchanged.ResourceStatusInterval).toBe(after.rows.ResourceStatusInterval);
    expect(unchanged.StatusChange).toBe(after.rows.StatusChange);

    const changes = (
      await gqlData<{ phase: { changes: { edges: { node: Record<string, unknown> }[] } } }>(api.url, CHANGES, {
        ns: 'shop',
        name: 'shop',
      })
    ).phase.changes.edges.map((e) => e.node);
    const applied = changes.filter((c) => String(c.message).startsWith('applied:'));
    expect(applied).toEqual([
      {
        resourceKey: 'apps/Deployment/shop/api',
        fromStatus: 'Current',
        toStatus: 'Current',
        message: 'applied: actuation Pending → Succeeded, reconcile Pending → Succeeded',
      },
    ]);

    expect(byName(await phase('shop', 'shop')).api).toMatchObject({ actuation: 'Succeeded' });
    const then = await gqlData<{ phase: { statusAt: PhaseAnswer } }>(api.url, PHASE_AT, {
      ns: 'shop',
      name: 'shop',
      at: new Date(succeededAt.getTime() - 1).toISOString(),
    });
    expect(byName(then.phase.statusAt).api).toEqual({
      strategy: 'Apply',
      actuation: 'Pending',
      reconcile: 'Pending',
      sync: null,
    });
    expect(then.phase.statusAt.appliedSummary?.actuation).toEqual([
      { value: 'Pending', count: 1 },
      { value: 'Succeeded', count: 1 },
    ]);
    expect(pendingAt.getTime()).toBeLessThan(succeededAt.getTime());
  });
});
