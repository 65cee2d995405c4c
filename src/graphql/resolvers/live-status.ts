/**
 * `Resource.liveStatus`: the object's `status` block now, asked of the cluster's owning worker
 * through the request's live status loader (one round trip per cluster and page). Only resources
 * read as a phase's (which the caller may see) have one, and a member of a namespace the token may
 * not read is withheld without asking, as its revision and tree are.
 */
import { canSee } from '../../auth/principal.ts';
import type { LiveStatus } from '../../generated/graphql.ts';
import type { ResourceRecord } from '../../store/read-types.ts';
import type { GraphqlContext } from '../context.ts';

function unknown(reason: string): LiveStatus {
  return { status: null, readAt: null, unknownReason: reason };
}

export async function resourceLiveStatus(r: ResourceRecord, ctx: GraphqlContext): Promise<LiveStatus | null> {
  if (r.view === undefined) return null;
  const [group = '', kind = '', namespace = '', ...rest] = r.key.split('/');
  if (!canSee(ctx.principal, r.view.cluster, namespace === '' ? null : namespace)) return unknown('WITHHELD');
  if (r.view.live !== true || r.to !== null) return unknown('NOT_LIVE');
  const answer = await ctx.loaders.liveStatus.load({
    cluster: r.view.cluster,
    group,
    kind,
    namespace,
    name: rest.join('/'),
  });
  if (!answer.ok) return unknown(answer.reason);
  return { status: answer.status, readAt: answer.readAt, unknownReason: null };
}
