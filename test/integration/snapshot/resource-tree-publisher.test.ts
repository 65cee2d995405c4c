/**
 * The Redis side of resource trees: a tree is rewritten only when it changed (an unchanged one has
 * its TTL renewed), comes back after its key was lost, and one cluster's name cannot reach into
 * another's keys.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createTreePublisher, createTreeReader } from '../../../src/pubsub/resource-trees.ts';
import type { ChildTree } from '../../../src/status/children.ts';
import { REDIS_URL, uniqueId } from './helpers.ts';

const redis = new Redis(REDIS_URL);
afterAll(() => redis.disconnect());

const tree = (status: 'Current' | 'InProgress'): ChildTree => ({
  omitted: 0,
  children: [
    {
      group: 'apps',
      kind: 'ReplicaSet',
      namespace: 'shop',
      name: 'web-1',
      status,
      message: '',
      children: [
        { group: '', kind: 'Pod', namespace: 'shop', name: 'web-1-a', status, message: 'Pod is Ready', children: [] },
      ],
    },
  ],
});

describe('published resource trees', () => {
  it('are rewritten only when they change; an unchanged tree only has its TTL renewed', async () => {
    const prefix = uniqueId('trees');
    const publisher = createTreePublisher(redis, { prefix, ttlMs: 5_000 });
    const reader = createTreeReader(redis, { prefix });
    const member = { cluster: 'east', memberKey: 'apps/Deployment/shop/web' };
    await publisher.publish('east', new Map([[member.memberKey, tree('InProgress')]]));
    const [first] = await reader.read([member]);
    expect(first?.children[0]?.children[0]).toMatchObject({ kind: 'Pod', name: 'web-1-a', status: 'InProgress' });
    const key = `${prefix}:tree:east:${member.memberKey}`;
    await redis.pexpire(key, 1_000);
    await new Promise((r) => setTimeout(r, 20));
    await publisher.publish('east', new Map([[member.memberKey, tree('InProgress')]]));
    const [same] = await reader.read([member]);
    expect(same?.changedAt.getTime()).toBe(first?.changedAt.getTime());
    expect(await redis.pttl(key)).toBeGreaterThan(1_000);

    await publisher.publish('east', new Map([[member.memberKey, tree('Current')]]));
    const [changed] = await reader.read([member]);
    expect(changed?.children[0]?.status).toBe('Current');
    expect(changed!.changedAt.getTime()).toBeGreaterThan(first!.changedAt.getTime());

    // The key is lost (Redis flushed, or it expired while the worker was away): the next publish writes it again.
    await redis.del(key);
    await publisher.publish('east', new Map([[member.memberKey, tree('Current')]]));
    await publisher.publish('east', new Map([[member.memberKey, tree('Current')]]));
    expect((await reader.read([member]))[0]?.children[0]?.status).toBe('Current');
  });

  it('are remembered per cluster: one cluster dropping a member or being forgotten leaves the others only renewed', async () => {
    const prefix = uniqueId('trees');
    const publisher = createTreePublisher(redis, { prefix, ttlMs: 5_000 });
    const reader = createTreeReader(redis, { prefix });
    const web = 'apps/Deployment/shop/web';
    const api = 'apps/Deployment/shop/api';
    await publisher.publish(
      'east',
      new Map([
        [web, tree('Current')],
        [api, tree('Current')],
      ]),
    );
    await publisher.publish('west', new Map([[web, tree('Current')]]));
    const [eastWeb, westWeb] = await reader.read([
      { cluster: 'east', memberKey: web },
      { cluster: 'west', memberKey: web },
    ]);
    await new Promise((r) => setTimeout(r, 20));

    // east's api left its phase: east forgets it, west's tree is not rewritten.
    await publisher.publish('east', new Map([[web, tree('Current')]]));
    await publisher.publish('west', new Map([[web, tree('Current')]]));
    const [eastAgain, westAgain] = await reader.read([
      { cluster: 'east', memberKey: web },
      { cluster: 'west', memberKey: web },
    ]);
    expect(eastAgain?.changedAt.getTime()).toBe(eastWeb?.changedAt.getTime());
    expect(westAgain?.changedAt.getTime()).toBe(westWeb?.changedAt.getTime());
    // api comes back to east: written again, not taken for the tree written before it left.
    await redis.del(`${prefix}:tree:east:${api}`);
    await publisher.publish(
      'east',
      new Map([
        [web, tree('Current')],
        [api, tree('Current')],
      ]),
    );
    expect((await reader.read([{ cluster: 'east', memberKey: api }]))[0]?.children[0]?.status).toBe('Current');

    // west moved to another worker and back: this process forgot it, so it writes its trees anew.
    publisher.forget('west');
    await publisher.publish('west', new Map([[web, tree('Current')]]));
    const [westBack, eastStill] = await reader.read([
      { cluster: 'west', memberKey: web },
      { cluster: 'east', memberKey: web },
    ]);
    expect(westBack!.changedAt.getTime()).toBeGreaterThan(westWeb!.changedAt.getTime());
    expect(eastStill?.changedAt.getTime()).toBe(eastWeb?.changedAt.getTime());
  });

  it('forget while a publish is under way: the publish ends and the cluster stays forgotten', async () => {
    const prefix = uniqueId('trees');
    const publisher = createTreePublisher(redis, { prefix, ttlMs: 5_000 });
    const reader = createTreeReader(redis, { prefix });
    const web = 'apps/Deployment/shop/web';
    const member = { cluster: 'east', memberKey: web };
    await publisher.publish('east', new Map([[web, tree('Current')]]));
    const [first] = await reader.read([member]);
    await new Promise((r) => setTimeout(r, 20));
    const underway = publisher.publish('east', new Map([[web, tree('Current')]]));
    publisher.forget('east');
    await underway;
    // Forgotten: the next publish writes the tree again instead of only renewing it.
    await publisher.publish('east', new Map([[web, tree('Current')]]));
    const [second] = await reader.read([member]);
    expect(second!.changedAt.getTime()).toBeGreaterThan(first!.changedAt.getTime());
  });

  it('keep clusters apart whatever their names', async () => {
    const prefix = uniqueId('trees');
    const publisher = createTreePublisher(redis, { prefix });
    const reader = createTreeReader(redis, { prefix });
    // A cluster named to look like another cluster's key prefix.
    await publisher.publish('east:apps', new Map([['Deployment/shop/web', tree('Current')]]));
    expect(
      await reader.read([
        { cluster: 'east', memberKey: 'apps/Deployment/shop/web' },
        { cluster: 'east:apps', memberKey: 'Deployment/shop/web' },
      ]),
    ).toEqual([undefined, expect.objectContaining({ omitted: 0 })]);
  });
});
