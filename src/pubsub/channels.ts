/**
 * Redis pub/sub channels for live status changes. Every change goes to the fleet channel and to its
 * cluster's channel, so a subscriber to one cluster does not filter the whole fleet's traffic.
 */
import type { Logger } from 'pino';

/** Options shared by publishers and subscribers. */
export interface ChannelOptions {
  /** Prefix of every channel (tests use a unique one). @default 'phaselog' */
  prefix?: string;
  /** Where the Redis connection's errors are logged (once per change of state). Swallowed when omitted. */
  log?: Logger;
}

/** Channel carrying every status change of every cluster. */
export function changesChannel(options: ChannelOptions = {}): string {
  return `${options.prefix ?? 'phaselog'}:status-changes`;
}

/** Channel carrying the status changes of one cluster. */
export function clusterChangesChannel(cluster: string, options: ChannelOptions = {}): string {
  return `${changesChannel(options)}:${encodeURIComponent(cluster)}`;
}

/** Channel on which a revoked API token is announced, so every API replica closes its WebSockets. */
export function tokenRevocationsChannel(options: ChannelOptions = {}): string {
  return `${options.prefix ?? 'phaselog'}:token-revocations`;
}
