/**
 * A `webhook` check: phaselog POSTs the phase (identity, status, summary, members with statuses) to
 * the integrator's service, signed with HMAC-SHA256, and the service answers the condition. The
 * contract is docs/schemas/condition-webhook.schema.json (the signature: ../auth/request-signature.ts); an answer that breaks it is
 * Unknown(InvalidResponse).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import type { ConditionStatus } from '../history/condition-changes.ts';
import { SIGNATURE_HEADER, signRequest } from '../auth/request-signature.ts';
import { PROJECT_ROOT } from '../runtime/paths.ts';
import type { PhaseRecord, ResourceRecord } from '../store/read-types.ts';
import type { WebhookCheckConfig } from './config.ts';
import { displayUrl, readCappedBody, requestFailure, requestProblem, type CheckVerdict } from './http-check.ts';

/** The published schema (request and response definitions). */
// From the project root, not this file: compiled, this module runs from dist/.
const SCHEMA = JSON.parse(
  readFileSync(path.join(PROJECT_ROOT, 'docs', 'schemas', 'condition-webhook.schema.json'), 'utf8'),
) as Record<string, unknown>;
const ajv = new Ajv({ allErrors: false, strict: false });
ajv.addSchema(SCHEMA);
const validateResponse = ajv.compile({
  $ref: 'https://phaselog.dev/schemas/condition-webhook.schema.json#/definitions/ConditionResponse',
});

/** What one webhook request needs. */
export interface WebhookRequestOptions {
  url: string;
  timeoutMs: number;
  secret: string;
  /** The condition type asked for. */
  type: string;
  phase: PhaseRecord;
  members: readonly ResourceRecord[];
}

/** The request body (ConditionRequest). */
export function webhookRequestBody(
  options: Omit<WebhookRequestOptions, 'url' | 'timeoutMs' | 'secret'>,
  sentAt: Date,
): string {
  const { phase } = options;
  return JSON.stringify({
    apiVersion: 'phaselog.dev/v1',
    kind: 'ConditionRequest',
    type: options.type,
    sentAt: sentAt.toISOString(),
    phase: {
      id: String(phase.id),
      cluster: phase.cluster,
      source: phase.source,
      namespace: phase.namespace,
      name: phase.name,
      labels: phase.labels,
      status: phase.current?.status ?? null,
      message: phase.current?.message ?? '',
      summary: phase.current?.summary ?? {},
    },
    members: options.members.map((m) => {
      const [group = '', kind = '', namespace = '', ...name] = m.key.split('/');
      return { group, kind, namespace, name: name.join('/'), status: m.status, message: m.message };
    }),
  });
}

/** A verdict of a webhook, with the condition type it is for (the type asked for, or `<type>/<suffix>`). */
export interface WebhookVerdict extends CheckVerdict {
  type: string;
}

/**
 * Posts the phase and reads the conditions; never throws. A failure is one Unknown verdict of the
 * type asked for.
 */
export async function runWebhookCheck(
  check: WebhookCheckConfig,
  options: WebhookRequestOptions,
): Promise<WebhookVerdict[]> {
  const answered = await askWebhook(check, options);
  return Array.isArray(answered) ? answered : [{ type: options.type, ...answered }];
}

async function askWebhook(
  check: WebhookCheckConfig,
  options: WebhookRequestOptions,
): Promise<CheckVerdict | WebhookVerdict[]> {
  const shown = `POST ${displayUrl(options.url)}`;
  const problem = requestProblem(options.url, {});
  if (problem !== undefined) return { status: 'Unknown', reason: 'InvalidRequest', message: `${shown}: ${problem}` };
  const sentAt = new Date();
  const body = webhookRequestBody(options, sentAt);
  let text: string;
  let status: number;
  try {
    const response = await fetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signRequest(options.secret, body, sentAt) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    status = response.status;
    text = await readCappedBody(response, check.maxBodyBytes);
  } catch (error) {
    const { reason, words } = requestFailure(error, options.timeoutMs);
    return { status: 'Unknown', reason, message: `${shown} ${words}` };
  }
  if (status < 200 || status > 299)
    return { status: 'Unknown', reason: 'UnexpectedStatus', message: `${shown} answered ${status}` };
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { status: 'Unknown', reason: 'InvalidResponse', message: `${shown} answered a body that is not JSON` };
  }
  if (!validateResponse(answer)) {
    const [first] = validateResponse.errors ?? [];
    return {
      status: 'Unknown',
      reason: 'InvalidResponse',
      message: `${shown} answered a ConditionResponse that breaks the schema: ${first ? `${first.instancePath || '/'} ${first.message ?? ''}` : 'invalid'}`,
    };
  }
  const conditions = (
    answer as { conditions: { type?: string; status: ConditionStatus; reason: string; message?: string }[] }
  ).conditions;
  const verdicts: WebhookVerdict[] = [];
  for (const c of conditions) {
    const type = c.type ?? options.type;
    // Only the type asked for and its own sub-types: a service cannot write another check's conditions.
    if (type !== options.type && !type.startsWith(`${options.type}/`)) {
      return {
        status: 'Unknown',
        reason: 'InvalidResponse',
        message: `${shown} answered condition ${JSON.stringify(type.slice(0, 63))}, which is neither ${options.type} nor ${options.type}/<suffix>`,
      };
    }
    if (verdicts.some((v) => v.type === type))
      return { status: 'Unknown', reason: 'InvalidResponse', message: `${shown} answered condition ${type} twice` };
    verdicts.push({ type, status: c.status, reason: c.reason, message: c.message ?? '' });
  }
  if (!verdicts.some((v) => v.type === options.type))
    return { status: 'Unknown', reason: 'InvalidResponse', message: `${shown} answered no ${options.type} condition` };
  return verdicts;
}
