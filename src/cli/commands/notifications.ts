/**
 * `phaselog notifications [--route R] [--status S]... [--cluster C] [-n NS] [--limit N]`: the newest
 * notification deliveries, with their state, attempts and last error; `--status failed` lists what
 * a receiver never got.
 */
import type { CommandContext } from '../context.ts';
import { CliError, EXIT } from '../errors.ts';
import { formatAgo, isDataFormat, renderList, renderTable } from '../format.ts';
import type { OutputFormat } from '../format.ts';

const DELIVERIES = `query Deliveries($filter: NotificationDeliveryFilter, $first: Int) {
  notificationDeliveries(filter: $filter, first: $first) {
    edges { node { id route seq kind status reason cluster phase { namespace name } at attempts lastError deliveredAt updatedAt } }
  }
}`;

/** A delivery as the API answers it. */
interface Delivery {
  id: string;
  route: string;
  seq: string;
  kind: string;
  status: string;
  reason: string | null;
  cluster: string;
  phase: { namespace: string; name: string } | null;
  at: string;
  attempts: number;
  lastError: string | null;
  deliveredAt: string | null;
  updatedAt: string;
}

export interface NotificationsOptions {
  route?: string;
  statuses: readonly string[];
  cluster?: string;
  namespace?: string;
  limit: number;
  output: OutputFormat;
  headers: boolean;
}

export async function runNotifications(ctx: CommandContext, options: NotificationsOptions): Promise<number> {
  if (options.output === 'name')
    throw new CliError('-o name lists phases (phaselog status -o name); use -o json for deliveries', EXIT.usage);
  const filter = {
    ...(options.route !== undefined ? { route: options.route } : {}),
    ...(options.statuses.length > 0 ? { status: options.statuses } : {}),
    ...(options.cluster !== undefined ? { cluster: options.cluster } : {}),
    ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
  };
  const data = await ctx.api.query<{ notificationDeliveries: { edges: { node: Delivery }[] } }>(DELIVERIES, {
    filter,
    first: options.limit,
  });
  const items = data.notificationDeliveries.edges.map((e) => e.node);
  if (isDataFormat(options.output))
    return (
      ctx.out(
        renderList(
          items.map(({ kind, ...d }) => ({ kind: 'NotificationDelivery', notification: kind, ...d })),
          options.output,
        ),
      ),
      EXIT.ok
    );
  if (items.length === 0) {
    // As kubectl says "No resources found": on stderr, so a pipe reads nothing.
    ctx.err(`no notification deliveries found${Object.keys(filter).length ? ' matching the filter' : ''}\n`);
    return EXIT.ok;
  }
  const now = ctx.now();
  const paintState = (status: string): string =>
    status === 'failed'
      ? ctx.paint('red', status)
      : status === 'delivered'
        ? ctx.paint('green', status)
        : status === 'pending' || status === 'held'
          ? ctx.paint('yellow', status)
          : ctx.paint('gray', status);
  const wide = options.output === 'wide';
  ctx.out(
    renderTable(
      wide
        ? ['TIME', 'ROUTE', 'SEQ', 'WHAT', 'KIND', 'STATUS', 'ATTEMPTS', 'DELIVERED', 'REASON', 'LAST ERROR']
        : ['TIME', 'ROUTE', 'WHAT', 'STATUS', 'ATTEMPTS', 'LAST ERROR'],
      items.map((d) => {
        const what = d.phase === null ? d.cluster : `${d.cluster}/${d.phase.namespace}/${d.phase.name}`;
        const status = paintState(d.status);
        return wide
          ? [
              formatAgo(d.at, now),
              d.route,
              d.seq,
              what,
              d.kind,
              status,
              String(d.attempts),
              d.deliveredAt ? formatAgo(d.deliveredAt, now) : '-',
              d.reason ?? '-',
              d.lastError ?? '-',
            ]
          : [
              formatAgo(d.at, now),
              d.route,
              what,
              d.reason ? `${status} (${d.reason})` : status,
              String(d.attempts),
              d.lastError ?? '-',
            ];
      }),
      { headers: options.headers },
    ),
  );
  return EXIT.ok;
}
