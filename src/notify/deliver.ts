/**
 * The send use case: one attempt at one delivery. The delivery row is the truth (its status and
 * attempts live in PostgreSQL, so they survive Redis losing the job); the job only carries which
 * delivery. A delivery not pending any more (sent already, or failed) is not sent again.
 */
import type { HistoryReader } from '../store/read-history.ts';
import type { NotificationStore } from '../store/notification-store.ts';
import { FULL_ACCESS } from '../store/read-types.ts';
import type { RouteConfig } from './config.ts';
import type { ResolvedReceiver } from './receiver-files.ts';
import { renderRequest } from './render.ts';
import { sendRequest } from './send.ts';

/** What an attempt came to. */
export type AttemptResult =
  { result: 'delivered' | 'skipped' } | { result: 'retry'; error: string } | { result: 'failed'; error: string };

/** A route with its receiver's URL and secret, read at start. */
export interface LiveRoute {
  config: RouteConfig;
  receiver: ResolvedReceiver;
}

/** Makes one attempt at delivery (route, seq). */
export async function attemptDelivery(
  deps: { store: NotificationStore; history: HistoryReader; uiBaseUrl?: string },
  route: LiveRoute,
  seq: bigint,
): Promise<AttemptResult> {
  const name = route.config.name;
  const delivery = await deps.store.get(name, seq);
  if (delivery === undefined || delivery.status !== 'pending') return { result: 'skipped' };
  const change = (await deps.history.listStatusChanges(FULL_ACCESS, {}, 1, seq - 1n)).items.find((c) => c.seq === seq);
  if (change === undefined) {
    const error = 'the change is no longer in the change log (retention removed it)';
    await deps.store.markAttemptFailed(name, seq, error, { reason: 'gone' });
    return { result: 'failed', error };
  }
  const request = renderRequest(
    route.config.receiver,
    {
      route: name,
      change,
      kind: delivery.kind,
      ...(delivery.flapCount !== null ? { flapCount: delivery.flapCount } : {}),
      ...(route.config.flapping !== undefined ? { flapWindowMs: route.config.flapping.window } : {}),
      ...(deps.uiBaseUrl !== undefined ? { uiBaseUrl: deps.uiBaseUrl } : {}),
    },
    route.receiver.secret,
    new Date(),
  );
  const outcome = await sendRequest(route.receiver.url, request, route.config.receiver.timeout);
  if (outcome.ok) {
    await deps.store.markDelivered(name, seq);
    return { result: 'delivered' };
  }
  // Attempts are counted in the row, so a job re-queued after Redis lost it does not start over.
  const final = !outcome.retryable || delivery.attempts + 1 >= route.config.retry.attempts;
  await deps.store.markAttemptFailed(
    name,
    seq,
    outcome.error,
    final ? { reason: outcome.retryable ? 'exhausted' : 'rejected' } : undefined,
  );
  return final ? { result: 'failed', error: outcome.error } : { result: 'retry', error: outcome.error };
}
