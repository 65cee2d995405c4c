/**
 * The live status-change event: a written StatusChange encoded for Redis pub/sub, and decoded back.
 * It carries ids, the change log cursor (`seq`) and the change itself; never object contents,
 * `message` being the status message the change log stores.
 */
import { z } from 'zod';
import type { StatusChange } from '../history/types.ts';

/** The event as published (JSON: `seq` as a decimal string since JSON has no bigint, `at` as ISO 8601). */
const changeEventSchema = z.object({
  seq: z.string().regex(/^\d+$/),
  at: z.string(),
  cluster: z.string(),
  clusterId: z.number().int(),
  phaseId: z.number().int().nullable(),
  phase: z.object({ sourceKind: z.string(), namespace: z.string(), name: z.string() }).nullable(),
  scope: z.enum(['cluster', 'phase', 'resource', 'condition']),
  resourceKey: z.string().nullable(),
  conditionType: z.string().nullable().optional(),
  fromStatus: z.string().nullable(),
  toStatus: z.string().nullable(),
  message: z.string(),
});

type ChangeEvent = z.infer<typeof changeEventSchema>;

/** The text published for a change written to the log. */
export function encodeChangeEvent(change: StatusChange): string {
  const { phase } = change;
  const event: ChangeEvent = {
    seq: change.seq.toString(),
    at: change.at.toISOString(),
    cluster: change.cluster,
    clusterId: change.clusterId,
    phaseId: change.phaseId,
    phase: phase === null ? null : { sourceKind: phase.sourceKind, namespace: phase.namespace, name: phase.name },
    scope: change.scope,
    resourceKey: change.resourceKey,
    // Only on condition changes, so the other events keep their shape.
    ...(change.conditionType != null ? { conditionType: change.conditionType } : {}),
    fromStatus: change.fromStatus,
    toStatus: change.toStatus,
    message: change.message,
  };
  return JSON.stringify(event);
}

/** The change an event read from Redis carries; undefined for anything that is not one. */
export function decodeChangeEvent(text: string): StatusChange | undefined {
  let parsed: ReturnType<typeof changeEventSchema.safeParse>;
  try {
    parsed = changeEventSchema.safeParse(JSON.parse(text));
  } catch {
    return undefined;
  }
  if (!parsed.success) return undefined;
  const event = parsed.data;
  const at = new Date(event.at);
  if (Number.isNaN(at.getTime())) return undefined;
  return { ...event, seq: BigInt(event.seq), at };
}
