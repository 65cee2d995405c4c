/**
 * The `checks` section of phaselog.yaml: integrators' checks, each producing one Kubernetes-style
 * condition (type = the check's name) on every phase it selects. One of `http`, `cel` or `webhook`.
 */
import { HOLDER_SOURCES } from '../inventory/holder.ts';
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
import { templateVariables, TEMPLATE_VARIABLE } from './url-template.ts';
import { compileCelCondition } from './cel-condition.ts';

const duration = (fallback: number) =>
  z
    .union([z.number().int().positive(), z.string()])
    .transform((value, ctx) => {
      const ms = typeof value === 'number' ? value : parseDuration(value);
      if (ms === undefined || ms <= 0) {
        ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration (use e.g. 500ms, 30s, 5m)` });
        return z.NEVER;
      }
      return ms;
    })
    .default(fallback);

/** Where a secret comes from: a file (its contents, trimmed) or an environment variable. Never the API. */
export const secretSourceSchema = z.union([
  z.strictObject({ file: z.string().min(1) }),
  z.strictObject({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name') }),
]);

/** A URL with `{{ variable }}` placeholders; every placeholder must be a known variable. */
const templatedUrl = z.string().superRefine((url, ctx) => {
  const variables = templateVariables(url);
  if (variables === undefined) {
    ctx.addIssue({ code: 'custom', message: 'unbalanced {{ }} in the URL' });
    return;
  }
  for (const name of variables) {
    if (!TEMPLATE_VARIABLE.test(name))
      ctx.addIssue({
        code: 'custom',
        message: `unknown template variable "${name}" (known: cluster, namespace, name, source, labels.<key>)`,
      });
  }
  // With every placeholder filled by a harmless value, it must be an http(s) URL.
  const sample = url.replace(/\{\{\s*([^}]*?)\s*\}\}/g, 'x');
  if (!/^https?:\/\//.test(sample) || !URL.canParse(sample))
    ctx.addIssue({ code: 'custom', message: 'must be an http:// or https:// URL' });
});

export const httpCheckSchema = z.strictObject({
  url: templatedUrl,
  method: z.enum(['GET', 'HEAD']).default('GET'),
  /** Status codes that make the condition True. @default [200] */
  expectStatus: z.array(z.number().int().min(100).max(599)).min(1).default([200]),
  /** Slower answers are False (SlowResponse). */
  maxLatency: z
    .union([z.number().int().positive(), z.string()])
    .transform((v, ctx) => {
      const ms = typeof v === 'number' ? v : parseDuration(v);
      if (ms === undefined) {
        ctx.addIssue({ code: 'custom', message: `"${v}" is not a duration` });
        return z.NEVER;
      }
      return ms;
    })
    .optional(),
  /** The body must contain this text. */
  bodyContains: z.string().min(1).optional(),
  /** A JSON-path into the JSON body (jsonpath-plus syntax); its first match must equal `equals` (or exist, without it). */
  jsonPath: z.string().min(1).optional(),
  equals: z.union([z.string(), z.number(), z.boolean()]).optional(),
  /** Request headers whose values come from files or the environment (tokens), never logged or stored. */
  headersFrom: z
    .array(z.strictObject({ name: z.string().regex(/^[A-Za-z0-9-]+$/, 'a header name') }).and(secretSourceSchema))
    .default([]),
  /** Largest body read, in bytes; a longer body is cut there (matches see the first part only). @default 65536 */
  maxBodyBytes: z
    .number()
    .int()
    .min(1)
    .max(10 * 1024 * 1024)
    .default(65_536),
});

export const celCheckSchema = z.strictObject({
  /** A CEL expression over `phase` and `objects` (the members' current objects); true: True, false: False. */
  expr: z.string().min(1),
});

export const webhookCheckSchema = z.strictObject({
  url: templatedUrl,
  /** HMAC-SHA256 key of `X-Phaselog-Signature` (src/auth/request-signature.ts). */
  secretFrom: secretSourceSchema,
  /** Largest response read, in bytes. @default 65536 */
  maxBodyBytes: z
    .number()
    .int()
    .min(1)
    .max(10 * 1024 * 1024)
    .default(65_536),
});

/** Which phases a check applies to; every field given narrows, an empty list matches all. */
export const checkSelectorSchema = z
  .strictObject({
    clusters: z.array(z.string().min(1)).default([]),
    namespaces: z.array(z.string()).default([]),
    names: z.array(z.string().min(1)).default([]),
    sources: z.array(z.string().min(1)).default([]),
    labels: z.record(z.string(), z.string()).default({}),
  })
  .default({ clusters: [], namespaces: [], names: [], sources: [], labels: {} });

const DERIVED_TYPES = new Set(['Ready', 'Reconciling', 'Stalled']);

export const checkSchema = z
  .strictObject({
    /** The condition type it produces. */
    name: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9._-]{0,62}$/, 'a letter, then letters, digits, ".", "_" or "-" (at most 63)')
      .refine((n) => !DERIVED_TYPES.has(n), 'Ready, Reconciling and Stalled are the derived conditions')
      .refine(
        (n) => !(HOLDER_SOURCES as readonly string[]).includes(n),
        'flux, argocd, kpt and owner name the conditions of the objects holding inventories (flux/Ready, ...)',
      ),
    select: checkSelectorSchema,
    /** How often http and webhook checks run (cel checks run with each snapshot, at its interval). @default 30s */
    interval: duration(30_000),
    /** Longest one request may take; slower is Unknown(Timeout). @default 5s */
    timeout: duration(5_000),
    /**
     * Let the condition make the phase's own status worse: while it is False, the phase is Failed
     * (whatever its resources say), recorded by the cluster's next snapshot, which a change of the
     * condition asks for at once. True and Unknown (a check that cannot run) change nothing: a
     * probe that times out is not an outage of the phase. @default false
     */
    affectsStatus: z.boolean().default(false),
    http: httpCheckSchema.optional(),
    cel: celCheckSchema.optional(),
    webhook: webhookCheckSchema.optional(),
  })
  .superRefine((check, ctx) => {
    const kinds = [check.http, check.cel, check.webhook].filter((k) => k !== undefined).length;
    if (kinds !== 1) ctx.addIssue({ code: 'custom', message: 'give exactly one of http, cel or webhook' });
    if (check.cel !== undefined) {
      try {
        compileCelCondition(check.cel.expr);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['cel', 'expr'], message: (error as Error).message });
      }
    }
  });

export const checksConfigSchema = z.array(checkSchema).superRefine((checks, ctx) => {
  const seen = new Set<string>();
  for (const [n, check] of checks.entries()) {
    if (seen.has(check.name))
      ctx.addIssue({ code: 'custom', path: [n, 'name'], message: `another check is named ${check.name}` });
    seen.add(check.name);
  }
});

export type CheckConfig = z.infer<typeof checkSchema>;
export type HttpCheckConfig = z.infer<typeof httpCheckSchema>;
export type WebhookCheckConfig = z.infer<typeof webhookCheckSchema>;
export type CheckSelector = z.infer<typeof checkSelectorSchema>;
export type SecretSource = z.infer<typeof secretSourceSchema>;

/** The phase fields a selector and a URL template see. */
export interface CheckedPhase {
  id: number;
  cluster: string;
  source: string;
  namespace: string;
  name: string;
  labels: Record<string, string>;
}

/** Whether `selector` selects `phase`. */
export function isSelected(selector: CheckSelector, phase: CheckedPhase): boolean {
  if (selector.clusters.length > 0 && !selector.clusters.includes(phase.cluster)) return false;
  if (selector.namespaces.length > 0 && !selector.namespaces.includes(phase.namespace)) return false;
  if (selector.names.length > 0 && !selector.names.includes(phase.name)) return false;
  if (selector.sources.length > 0 && !selector.sources.includes(phase.source)) return false;
  return Object.entries(selector.labels).every(([k, v]) => phase.labels[k] === v);
}
