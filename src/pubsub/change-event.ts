/**
 * The payload of a live status-change event: ids, the change log cursor (`seq`), and the change
 * itself. Never object contents; `message` is the status message the change log stores.
 */
import { z } from 'zod';
import type { StatusChangeRecord } from '../history/types.ts';

/** A status change as published on Redis (JSON; `seq` as a decimal string since JSON has no bigint). */
export const changeEventSchema = z.object({
  seq: z.string().regex(/^\d+$/),
  at: z.string(),
  cluster: z.string(),
  clusterId: z.number().int(),
  phaseId: z.number().int().nullable(),
  phase: z.object({ sourceKind: z.string(), namespace: z.string(), name: z.string() }).nullable(),
  scope: z.enum(['cluster', 'phase', 'resource']),
  resourceKey: z.string().nullable(),
  fromStatus: z.string().nullable(),
  toStatus: z.string().nullable(),
  message: z.string(),
});

/** A status-change event. */
export type ChangeEvent = z.infer<typeof changeEventSchema>;

/** The event published for a change written to the log. */
export function toChangeEvent(change: StatusChangeRecord): ChangeEvent {
  return {
    seq: change.seq.toString(),
    at: change.at.toISOString(),
    cluster: change.cluster,
    clusterId: change.clusterId,
    phaseId: change.phaseId,
    phase: change.phase,
    scope: change.scope,
    resourceKey: change.resourceKey,
    fromStatus: change.fromStatus,
    toStatus: change.toStatus,
    message: change.message,
  };
}

/** Parses an event read from Redis; undefined for anything that is not one. */
export function parseChangeEvent(text: string): ChangeEvent | undefined {
  try {
    const parsed = changeEventSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
