/**
 * `notifications` in phaselog.yaml: routes from the change log to receivers. A route says which
 * changes it wants (`match`), how long a new status must hold before it is told (`minDuration`),
 * when a flapping subject is summed up instead of told change by change (`flapping`), and where it
 * goes (`receiver`: a signed JSON webhook, a Slack incoming webhook, or a CloudEvent over HTTP).
 *
 * Receiver URLs and secrets may come from files (`urlFile`, `secretFile`, e.g. a mounted Kubernetes
 * Secret): a Slack incoming-webhook URL is itself a credential. Files are checked when the
 * configuration is loaded and read by the worker that sends; their contents never enter job
 * payloads, stored rows, logs or the API.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.ts';

/** What a change is about, as routes name it (StatusChange.scope). */
export const CHANGE_KINDS = ['phase', 'resource', 'cluster', 'condition'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** A duration of zero or more: `0` turns the rule off. */
const durationOrZero = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const ms = typeof value === 'number' ? value : parseDuration(value);
  if (ms === undefined || !Number.isInteger(ms) || ms < 0) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration of zero or more (use e.g. 0, 30s, 5m)` });
    return z.NEVER;
  }
  return ms;
});
const positiveDuration = durationOrZero.refine((ms) => ms > 0, { message: 'must be longer than 0' });

/** An http(s) URL without a fragment: the only kinds a receiver may be. */
export function receiverUrlProblem(value: string): string | undefined {
  if (!URL.canParse(value)) return 'is not a URL';
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be http:// or https:// (got ${url.protocol})`;
  if (url.hash !== '') return 'must not have a #fragment';
  return undefined;
}
const receiverUrl = z.string().superRefine((value, ctx) => {
  const problem = receiverUrlProblem(value);
  // The URL itself is not repeated: a Slack URL is a credential.
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});
const fileName = z.string().min(1);

const receiverBase = {
  /** The receiver's URL, or `urlFile`: a file holding it (relative paths from phaselog.yaml's directory). */
  url: receiverUrl.optional(),
  urlFile: fileName.optional(),
  /** How long one attempt may take, connect to last byte. @default 10s */
  timeout: positiveDuration.default(10_000),
};

/** Where a route's notifications go. */
export const receiverSchema = z
  .discriminatedUnion(
    'type',
    [
      /** JSON body, signed `X-Phaselog-Signature: t=<unix seconds>,v1=<hex HMAC of "<t>.<raw body>">` with the secret in `secretFile`. */
      z.strictObject({ type: z.literal('webhook'), ...receiverBase, secretFile: fileName }),
      /** A Slack incoming webhook (`{ text, blocks }`); its URL is the credential, so prefer `urlFile`. */
      z.strictObject({ type: z.literal('slack'), ...receiverBase }),
      /** A CloudEvent 1.0 in HTTP structured mode; signed as webhooks are when `secretFile` is set. */
      z.strictObject({
        type: z.literal('cloudevents'),
        ...receiverBase,
        secretFile: fileName.optional(),
        source: z.string().min(1).default('/phaselog'),
      }),
    ],
    { error: (issue) => (issue.code === 'invalid_union' ? 'type must be webhook, slack or cloudevents' : undefined) },
  )
  .superRefine((receiver, ctx) => {
    if ((receiver.url === undefined) === (receiver.urlFile === undefined))
      ctx.addIssue({ code: 'custom', message: 'set exactly one of url and urlFile' });
  });
export type ReceiverConfig = z.infer<typeof receiverSchema>;

/** Which changes a route wants. Each list restricts when non-empty; an empty one matches all. */
export const routeMatchSchema = z.strictObject({
  clusters: z.array(z.string().min(1)).default([]),
  /** Namespaces of the changes' phases (cluster changes have none and match no namespace list). */
  namespaces: z.array(z.string().min(1)).default([]),
  /** Phase names. */
  phases: z.array(z.string().min(1)).default([]),
  /** Labels every matching phase carries (exact values). */
  labels: z.record(z.string(), z.string()).default({}),
  /** What the change is about. @default [phase] */
  changes: z.array(z.enum(CHANGE_KINDS)).min(1).default(['phase']),
  /** Condition types, for `condition` changes. */
  conditionTypes: z.array(z.string().min(1)).default([]),
  /** Statuses changed from (`none` for a first appearance). */
  from: z.array(z.string().min(1)).default([]),
  /** Statuses changed to (`none` for a disappearance). */
  to: z.array(z.string().min(1)).default([]),
});
export type RouteMatch = z.infer<typeof routeMatchSchema>;

/** One route. */
export const routeSchema = z.strictObject({
  /** Unique name; delivery ids and idempotency keys carry it, so renaming a route starts it afresh. */
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-" (at most 64)'),
  match: routeMatchSchema.default({
    clusters: [],
    namespaces: [],
    phases: [],
    labels: {},
    changes: ['phase'],
    conditionTypes: [],
    from: [],
    to: [],
  }),
  /** Tell a change only once its new status has held this long; one undone sooner is suppressed. @default 0 (at once) */
  minDuration: durationOrZero.default(0),
  /** More than `maxChanges` matching changes of one subject within `window`: one summary, then quiet until calm. */
  flapping: z.strictObject({ maxChanges: z.number().int().min(1), window: positiveDuration }).optional(),
  receiver: receiverSchema,
  /** Attempts per delivery and the first retry's delay (doubling each time). @default 8 attempts, 1s */
  retry: z
    .strictObject({ attempts: z.number().int().min(1).max(50).default(8), backoff: positiveDuration.default(1000) })
    .default({ attempts: 8, backoff: 1000 }),
});
export type RouteConfig = z.infer<typeof routeSchema>;

/** The `notifications` section. */
export const notificationsConfigSchema = z
  .strictObject({
    /** The web UI's address as users reach it (e.g. https://phaselog.example.com): messages link to the phase's page. */
    uiBaseUrl: receiverUrl.optional(),
    /** How often the change log is read for new changes. @default 1s */
    scanInterval: positiveDuration.default(1000),
    routes: z.array(routeSchema).default([]),
  })
  .superRefine((section, ctx) => {
    const seen = new Set<string>();
    section.routes.forEach((route, i) => {
      if (seen.has(route.name))
        ctx.addIssue({ code: 'custom', path: ['routes', i, 'name'], message: `route "${route.name}" is named twice` });
      seen.add(route.name);
    });
  });
export type NotificationsConfig = z.infer<typeof notificationsConfigSchema>;
