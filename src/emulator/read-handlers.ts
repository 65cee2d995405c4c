/**
 * GET of one object and LIST (with selectors, limit/continue and resourceVersion semantics).
 */
import type { ServerResponse } from 'node:http';
import { makeFailure, makeNotFound, type ApiFailure } from './api-status.ts';
import { formatApiVersion, type ResourceType } from './catalog.ts';
import type { ClusterState } from './cluster-state.ts';
import { sendFailure, sendJson } from './http-io.ts';
import {
  decodeContinue,
  encodeContinue,
  isSelected,
  parseCount,
  parseResourceVersion,
  parseSelection,
} from './list-query.ts';
import { presentObject, serializeList, serializeListItem, serializeObject } from './present.ts';
import type { ResourceRequest } from './request-info.ts';
import { readMeta } from './object-store.ts';
import { buildTable, selectColumns, TABLE_CONTENT_TYPE } from './table.ts';
import type { KubeObject } from './types.ts';

function isFailure(v: unknown): v is ApiFailure {
  return typeof v === 'object' && v !== null && 'body' in v && 'code' in v;
}

/** How the client wants objects printed: as themselves, or as rows of a Table. */
export interface OutputFormat {
  table: boolean;
  includeObject: string | null;
}

/** What the read handlers take from a request (as write-handlers' `WriteInput`). */
export interface ReadInput {
  type: ResourceType;
  info: ResourceRequest;
  params: URLSearchParams;
  format: OutputFormat;
}

/** The CRD object behind a custom type (for its printer columns). */
export function findCrd(state: ClusterState, type: ResourceType): KubeObject | undefined {
  if (!type.custom) return undefined;
  const crdType = state.registry.findByKind('apiextensions.k8s.io', 'CustomResourceDefinition');
  return crdType ? state.get(crdType, '', `${type.plural}.${type.group}`) : undefined;
}

function sendTable(
  state: ClusterState,
  input: ReadInput,
  page: { items: KubeObject[]; metadata: Record<string, unknown> },
  res: ServerResponse,
): void {
  const { type, info } = input;
  const columns = selectColumns(type, info.version, findCrd(state, type));
  const shown = page.items.map((o) => presentObject(type, o, info.version));
  sendJson(res, 200, buildTable(columns, shown, page.metadata, input.format.includeObject), TABLE_CONTENT_TYPE);
}

/** GET /.../<plural>/<name>[/status]. */
export function handleGet(state: ClusterState, input: ReadInput, res: ServerResponse): void {
  const { type, info } = input;
  if (info.subresource !== undefined && !(info.subresource === 'status' && type.hasStatus)) {
    sendFailure(res, makeFailure(404, 'the server could not find the requested resource'));
    return;
  }
  const obj = state.get(type, info.namespace ?? '', info.name ?? '');
  if (!obj) {
    sendFailure(res, makeNotFound(type.group, type.plural, info.name ?? ''));
    return;
  }
  if (input.format.table) {
    sendTable(
      state,
      input,
      { items: [obj], metadata: { resourceVersion: String(readMeta(obj)['resourceVersion'] ?? '') } },
      res,
    );
    return;
  }
  sendJson(res, 200, serializeObject(type, obj, info.version));
}

/** Computes one page of a list; shared by LIST and deletecollection. */
export function selectPage(
  state: ClusterState,
  type: ResourceType,
  info: ResourceRequest,
  params: URLSearchParams,
): { items: KubeObject[]; metadata: Record<string, unknown> } | ApiFailure {
  const selection = parseSelection(params, type);
  if (isFailure(selection)) return selection;
  const limit = parseCount(params, 'limit');
  if (isFailure(limit)) return limit;
  const rv = parseResourceVersion(params);
  if (isFailure(rv)) return rv;
  const compacted = state.store.compactedRevision(type);
  const current = state.store.revision();
  const match = params.get('resourceVersionMatch');
  if (match !== null && match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    return makeFailure(
      400,
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    );
  }
  if (rv !== undefined && rv > current) {
    return makeFailure(
      504,
      `Too large resource version: ${rv}, current: ${current}`,
      { retryAfterSeconds: 1 },
      'Timeout',
    );
  }
  if (match === 'Exact' && rv !== undefined && rv < compacted) {
    return makeFailure(410, `too old resource version: ${rv} (${compacted})`, undefined, 'Expired');
  }
  let startAfter: string | undefined;
  let listRv = current;
  const cont = params.get('continue');
  if (cont !== null && cont !== '') {
    const token = decodeContinue(cont, compacted);
    if (isFailure(token)) return token;
    startAfter = token.start;
    listRv = token.rv;
  }
  const keys = state.store.sortedKeys(type, type.namespaced ? info.namespace : undefined);
  let from = 0;
  if (startAfter !== undefined) {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((keys[mid] as string) <= startAfter) lo = mid + 1;
      else hi = mid;
    }
    from = lo;
  }
  const filtered = selection.labels.length > 0 || selection.fields.length > 0;
  const items: KubeObject[] = [];
  let lastKey: string | undefined;
  let i = from;
  for (; i < keys.length; i++) {
    if (limit !== undefined && limit > 0 && items.length === limit) break;
    const key = keys[i] as string;
    const obj = state.store.getByKey(type, key);
    if (!obj || (filtered && !isSelected(selection, obj))) continue;
    items.push(obj);
    lastKey = key;
  }
  const metadata: Record<string, unknown> = { resourceVersion: String(listRv) };
  if (i < keys.length && lastKey !== undefined) {
    // More may match: without selectors the apiserver also reports how many items remain.
    metadata['continue'] = encodeContinue({ rv: listRv, start: lastKey });
    if (!filtered) metadata['remainingItemCount'] = keys.length - i;
  }
  return { items, metadata };
}

/** GET on a collection. */
export function handleList(state: ClusterState, input: ReadInput, res: ServerResponse): void {
  const { type, info } = input;
  const page = selectPage(state, type, info, input.params);
  if (isFailure(page)) {
    sendFailure(res, page);
    return;
  }
  if (input.format.table) {
    sendTable(state, input, page, res);
    return;
  }
  const items = page.items.map((o) => serializeListItem(type, o, info.version));
  sendJson(
    res,
    200,
    serializeList(`${type.kind}List`, formatApiVersion(type.group, info.version), page.metadata, items),
  );
}
