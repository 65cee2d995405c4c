/**
 * What one client may hold on the WebSocket endpoint. graphql-ws multiplexes every operation of a
 * client on one connection, so an honest client needs few connections; these bounds keep one
 * client (an address, or a token used from many addresses) from holding the server's memory.
 */
import { GraphQLError } from 'graphql';

/** Limits of the WebSocket endpoint. */
export interface WebSocketLimits {
  /**
   * Largest message, in bytes (as the HTTP body limit). A larger one closes the connection with
   * 1009 (message too big) as soon as its frame header or running size says so, without buffering it.
   * @default 1048576
   */
  maxMessageBytes: number;
  /**
   * Open connections from one client address; the next upgrade is refused with HTTP 429. Behind a
   * reverse proxy every client has the proxy's address, so this bounds them all together.
   * @default 256
   */
  maxConnectionsPerIp: number;
  /** Open connections of one API token; the next is closed at `connection_init` with 4429. @default 64 */
  maxConnectionsPerToken: number;
  /** Operations (mostly subscriptions) running at once on one connection; the next gets a TOO_MANY_OPERATIONS error. @default 100 */
  maxOperationsPerConnection: number;
  /** Time a client has after the upgrade to send `connection_init` before it is closed with 4408. @default 3000 */
  connectionInitTimeoutMs: number;
}

export const DEFAULT_WEBSOCKET_LIMITS: WebSocketLimits = {
  maxMessageBytes: 1024 * 1024,
  maxConnectionsPerIp: 256,
  maxConnectionsPerToken: 64,
  maxOperationsPerConnection: 100,
  connectionInitTimeoutMs: 3000,
};

/** Close code for a connection over its token's limit (graphql-ws leaves 4400-4499 for such uses; 429 as in HTTP). */
export const TOO_MANY_CONNECTIONS_CLOSE_CODE = 4429;

/** Counts open connections per key (an address or a token name). */
export interface ConnectionCounter {
  /** Whether `key` is below the limit. */
  hasRoom(key: string): boolean;
  /** Counts one connection for `key` when below the limit; returns its release (safe to call twice), else undefined. */
  acquire(key: string): (() => void) | undefined;
}

export function createConnectionCounter(max: number): ConnectionCounter {
  const open = new Map<string, number>();
  const hasRoom = (key: string) => (open.get(key) ?? 0) < max;
  return {
    hasRoom,
    acquire(key) {
      if (!hasRoom(key)) return undefined;
      open.set(key, (open.get(key) ?? 0) + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left <= 0) open.delete(key);
        else open.set(key, left);
      };
    },
  };
}

/** The error of an operation over the connection's limit. */
export function tooManyOperations(max: number): GraphQLError {
  return new GraphQLError(`this connection already runs ${max} operations; complete some, or open another connection`, {
    extensions: { code: 'TOO_MANY_OPERATIONS' },
  });
}
