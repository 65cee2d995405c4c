/**
 * PURE. What a receiver is sent for one delivery: the body and headers of the HTTP request. Every
 * request carries `X-Phaselog-Delivery: <route>:<seq>`, the same on every attempt, so a receiver
 * can drop a repeat (see README: a crash between the receiver's answer and phaselog recording it
 * sends the same delivery again).
 */
import { SIGNATURE_HEADER, signRequest } from '../auth/request-signature.ts';
import { formatDuration } from '../duration.ts';
import { phasePath } from '../ui/paths.ts';
import type { ReceiverConfig } from './config.ts';
import type { NotifiableChange } from './judge.ts';

/** CloudEvents `type` of a change, by what it is about. */
const EVENT_TYPES: Record<string, string> = {
  phase: 'dev.phaselog.phase.status.changed',
  resource: 'dev.phaselog.resource.status.changed',
  cluster: 'dev.phaselog.cluster.reachability.changed',
  condition: 'dev.phaselog.condition.status.changed',
};
const FLAPPING_TYPE = 'dev.phaselog.flapping';

/** One delivery to render. */
export interface DeliveryToSend {
  route: string;
  change: NotifiableChange;
  kind: 'transition' | 'flapping';
  /** A flapping summary's count of changes within `flapWindowMs`. */
  flapCount?: number;
  flapWindowMs?: number;
  /** The web UI's base URL, when configured. */
  uiBaseUrl?: string;
}

/** An HTTP request to send. */
export interface RenderedRequest {
  body: string;
  headers: Record<string, string>;
}

/** The idempotency key of a delivery: stable across attempts, restarts and workers. */
export function deliveryKey(route: string, seq: bigint): string {
  return `${route}:${seq}`;
}

/** The phase's page in the web UI (the path its router serves). */
export function phaseUiUrl(uiBaseUrl: string, phase: { namespace: string; name: string }, cluster: string): string {
  return `${uiBaseUrl.replace(/\/+$/, '')}${phasePath({ cluster, namespace: phase.namespace, name: phase.name })}`;
}

/** The receiver-neutral facts of a delivery (the webhook body, the CloudEvent's data). */
export function deliveryFacts(d: DeliveryToSend): Record<string, unknown> {
  const c = d.change;
  return {
    id: deliveryKey(d.route, c.seq),
    route: d.route,
    kind: d.kind,
    seq: c.seq.toString(),
    at: c.at.toISOString(),
    cluster: c.cluster,
    scope: c.scope,
    phase: c.phase === null ? null : { source: c.phase.sourceKind, namespace: c.phase.namespace, name: c.phase.name },
    resourceKey: c.resourceKey,
    ...(c.conditionType != null ? { conditionType: c.conditionType } : {}),
    fromStatus: c.fromStatus,
    toStatus: c.toStatus,
    message: c.message,
    url: d.uiBaseUrl !== undefined && c.phase !== null ? phaseUiUrl(d.uiBaseUrl, c.phase, c.cluster) : null,
    ...(d.kind === 'flapping'
      ? { flapping: { changes: d.flapCount ?? 0, windowSeconds: Math.round((d.flapWindowMs ?? 0) / 1000) } }
      : {}),
  };
}

/** One line a person reads. */
export function summaryLine(d: DeliveryToSend): string {
  const c = d.change;
  const what =
    c.phase === null
      ? `cluster ${c.cluster}`
      : `${c.cluster}/${c.phase.namespace}/${c.phase.name}${c.resourceKey !== null ? ` ${c.resourceKey}` : ''}${c.conditionType != null ? ` condition ${c.conditionType}` : ''}`;
  if (d.kind === 'flapping') {
    return `${what} is flapping: ${d.flapCount ?? 0} changes within ${formatDuration(d.flapWindowMs ?? 0)}, now ${c.toStatus ?? 'gone'}; further changes are held back until it calms down`;
  }
  return `${what}: ${c.fromStatus ?? 'none'} → ${c.toStatus ?? 'none'}${c.message !== '' ? ` (${c.message})` : ''}`;
}

/**
 * Text as Slack's mrkdwn shows it literally: `&`, `<` and `>` as HTML entities, the three characters
 * Slack asks senders to escape (api.slack.com, "Escaping text"). Unescaped, a status message
 * could ping a channel (`<!channel>`), mention someone (`<@U123>`) or show a link under words of
 * its choosing (`<https://evil.example|re-authenticate>`). Every text that enters a Slack message
 * passes here; only phaselog's own link markup is added after.
 */
export function escapeSlackText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * The request for `receiver`; signed at `signedAt` when the receiver has a secret (each attempt
 * is signed anew, so a retry carries a fresh timestamp and the same delivery key).
 */
export function renderRequest(
  receiver: Pick<ReceiverConfig, 'type'> & { source?: string },
  d: DeliveryToSend,
  secret: string | undefined,
  signedAt: Date,
): RenderedRequest {
  const facts = deliveryFacts(d);
  const key = deliveryKey(d.route, d.change.seq);
  let body: string;
  let contentType = 'application/json';
  if (receiver.type === 'slack') {
    const line = escapeSlackText(summaryLine(d));
    const link = typeof facts.url === 'string' ? ` <${escapeSlackText(facts.url)}|open in phaselog>` : '';
    body = JSON.stringify({
      text: line,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `${line}${link}` } }],
    });
  } else if (receiver.type === 'cloudevents') {
    // Written by hand: the CloudEvents structured mode is a small JSON envelope, and the `cloudevents`
    // SDK drags browser polyfills into the worker for it.
    contentType = 'application/cloudevents+json';
    body = JSON.stringify({
      specversion: '1.0',
      id: key,
      source: receiver.source ?? '/phaselog',
      type: d.kind === 'flapping' ? FLAPPING_TYPE : (EVENT_TYPES[d.change.scope] ?? 'dev.phaselog.status.changed'),
      subject:
        d.change.phase === null
          ? d.change.cluster
          : `${d.change.cluster}/${d.change.phase.namespace}/${d.change.phase.name}`,
      time: d.change.at.toISOString(),
      datacontenttype: 'application/json',
      data: facts,
    });
  } else {
    body = JSON.stringify(facts);
  }
  const headers: Record<string, string> = {
    'content-type': contentType,
    'x-phaselog-delivery': key,
    'user-agent': 'phaselog-notifications',
  };
  if (secret !== undefined) headers[SIGNATURE_HEADER.toLowerCase()] = signRequest(secret, body, signedAt);
  return { body, headers };
}
