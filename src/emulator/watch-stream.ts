/**
 * Watch streams: newline-delimited JSON events over a chunked 200 response, as kube-apiserver
 * sends them. Initial state (synthetic ADDED events) or history replay from a resourceVersion,
 * then live events; BOOKMARKs when asked; an ERROR event with a 410 Status when the requested
 * resourceVersion has been compacted; the stream ends at `timeoutSeconds`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeFailure, type ApiFailure } from './api-status.ts';
import { formatApiVersion } from './catalog.ts';
import type { ClusterState } from './cluster-state.ts';
import { sendFailure } from './http-io.ts';
import { isSelected, parseCount, parseResourceVersion, parseSelection, type Selection } from './list-query.ts';
import type { ChangeEvent, ChangeType } from './object-store.ts';
import { presentObject, serializeObject } from './present.ts';
import { findCrd, type ReadInput } from './read-handlers.ts';
import { buildTable, selectColumns, TABLE_CONTENT_TYPE } from './table.ts';
import type { KubeObject } from './types.ts';

/** Default server-side watch duration when the client sets no timeoutSeconds (the apiserver picks 30-60 min). */
const DEFAULT_TIMEOUT_S = 1800;

/** Unread bytes a watch may queue before it is closed. */
const MAX_BACKLOG_BYTES = 64 * 1024 * 1024;

function isFailure(v: unknown): v is ApiFailure {
  return typeof v === 'object' && v !== null && 'body' in v && 'code' in v;
}

/**
 * What a watcher with selectors sees of a change: like the apiserver's watch cache, an object that
 * starts matching arrives as ADDED and one that stops matching as DELETED (with its new state).
 */
export function projectEvent(
  e: ChangeEvent,
  selection: Selection,
): { type: ChangeType; object: KubeObject } | undefined {
  const now = isSelected(selection, e.object);
  if (e.type !== 'MODIFIED' || e.previous === undefined) return now ? e : undefined;
  const before = isSelected(selection, e.previous);
  if (now && before) return e;
  if (now) return { type: 'ADDED', object: e.object };
  if (before) return { type: 'DELETED', object: e.object };
  return undefined;
}

/** One open watch. */
interface OpenWatch {
  end(): void;
}

/** Tracks open watches so they can be ended together. */
export class WatchHub {
  private readonly open = new Set<OpenWatch>();

  constructor(
    private readonly state: ClusterState,
    private readonly bookmarkIntervalMs: number,
  ) {}

  /** Number of open watch streams. */
  size(): number {
    return this.open.size;
  }

  /** Ends every open stream; returns how many. */
  endAll(): number {
    const all = [...this.open];
    for (const w of all) w.end();
    return all.length;
  }

  /** Serves a watch request; returns the HTTP status it answered with. */
  serve(input: ReadInput, req: IncomingMessage, res: ServerResponse): number {
    const { type, info, params, format } = input;
    const selection = parseSelection(params, type, info.name);
    const rv = parseResourceVersion(params);
    const timeout = parseCount(params, 'timeoutSeconds');
    for (const v of [selection, rv, timeout]) {
      if (isFailure(v)) {
        sendFailure(res, v);
        return v.code;
      }
    }
    if (isFailure(selection) || isFailure(rv) || isFailure(timeout)) return 400;
    const namespace = type.namespaced ? info.namespace : undefined;
    const bookmarks = params.get('allowWatchBookmarks') === 'true';
    const sendInitial = params.get('sendInitialEvents') === 'true';
    if (sendInitial && !bookmarks) {
      const failure = makeFailure(
        422,
        'Invalid value: sendInitialEvents: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
        undefined,
        'Invalid',
      );
      sendFailure(res, failure);
      return failure.code;
    }
    res.writeHead(200, {
      'Content-Type': format.table ? TABLE_CONTENT_TYPE : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    res.flushHeaders();
    const apiVersion = formatApiVersion(type.group, info.version);
    let endSlowWatch: () => void = () => undefined;
    const write = (line: Record<string, unknown>): void => writeText(JSON.stringify(line) + '\n');
    const writeText = (text: string): void => {
      if (res.writableEnded || res.destroyed) return;
      res.write(text);
      // A client that stops reading is cut off (as the apiserver drops slow watchers) instead of
      // letting its backlog grow without bound; it will relist or re-watch.
      if (res.writableLength > MAX_BACKLOG_BYTES) endSlowWatch();
    };
    // Table watches carry one-row Tables; only the first event repeats the column definitions.
    const columns = format.table ? selectColumns(type, info.version, findCrd(this.state, type)) : undefined;
    let sentDefinitions = false;
    const writeEvent = (e: { type: string; object: KubeObject }): void => {
      if (!columns)
        return writeText(`{"type":"${e.type}","object":${serializeObject(type, e.object, info.version)}}\n`);
      const shown = presentObject(type, e.object, info.version);
      const meta = { resourceVersion: String(shown.metadata?.['resourceVersion'] ?? '') };
      write({ type: e.type, object: buildTable(columns, [shown], meta, format.includeObject, !sentDefinitions) });
      sentDefinitions = true;
    };
    const bookmark = (annotations?: Record<string, string>): void => {
      const metadata: Record<string, unknown> = { resourceVersion: String(this.state.store.revision()) };
      if (annotations) metadata['annotations'] = annotations;
      write({ type: 'BOOKMARK', object: { kind: type.kind, apiVersion, metadata } });
    };

    const compacted = this.state.store.compactedRevision(type);
    if (rv !== undefined && rv !== 0 && rv < compacted && !sendInitial) {
      write({
        type: 'ERROR',
        object: makeFailure(410, `too old resource version: ${rv} (${compacted})`, undefined, 'Expired').body,
      });
      res.end();
      return 200;
    }

    const timers: { timeout?: NodeJS.Timeout; ticker?: NodeJS.Timeout } = {};
    const watch: OpenWatch = {
      end: () => {
        if (!this.open.delete(watch)) return;
        removeWatcher();
        clearTimeout(timers.timeout);
        clearInterval(timers.ticker);
        if (!res.writableEnded) res.end();
      },
    };
    const removeWatcher = this.state.store.addWatcher(type, {
      ...(namespace !== undefined ? { namespace } : {}),
      deliver: (e: ChangeEvent) => {
        const seen = projectEvent(e, selection);
        if (seen) writeEvent(seen);
      },
    });
    this.open.add(watch);
    endSlowWatch = () => queueMicrotask(() => watch.end());

    // Registration and replay happen in one synchronous turn, so no change can slip between them.
    if (rv === undefined || rv === 0 || sendInitial) {
      for (const obj of this.state.store.listSorted(type, namespace))
        if (isSelected(selection, obj)) writeEvent({ type: 'ADDED', object: obj });
      if (sendInitial) bookmark({ 'k8s.io/initial-events-end': 'true' });
    } else {
      for (const e of this.state.store.eventsSince(type, rv)) {
        if (namespace !== undefined && e.object.metadata?.['namespace'] !== namespace) continue;
        const seen = projectEvent(e, selection);
        if (seen) writeEvent(seen);
      }
    }

    const seconds = timeout !== undefined && timeout > 0 ? timeout : DEFAULT_TIMEOUT_S;
    timers.timeout = setTimeout(() => {
      if (bookmarks) bookmark();
      watch.end();
    }, seconds * 1000);
    if (bookmarks) timers.ticker = setInterval(() => bookmark(), this.bookmarkIntervalMs);
    req.on('close', () => watch.end());
    res.on('close', () => watch.end());
    return 200;
  }
}
