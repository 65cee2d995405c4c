/**
 * The request pipeline: classify, log, authenticate, apply faults, dispatch. Kept free of server
 * set-up so the same handler serves HTTP and HTTPS.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestGuard } from '../http/origin.ts';
import { makeFailure, makeFaultFailure, type ApiFailure } from './api-status.ts';
import type { ClusterState } from './cluster-state.ts';
import {
  AGGREGATED_CONTENT_TYPE,
  buildAggregated,
  buildCoreVersions,
  buildGroup,
  buildGroupList,
  buildResourceList,
  buildVersion,
  wantsAggregated,
} from './discovery.ts';
import type { FaultSet } from './faults.ts';
import { readBody, readBodyBytes, sendFailure, sendJson } from './http-io.ts';
import { buildOpenApiV2, buildOpenApiV3Index, buildOpenApiV3GroupVersion } from './openapi.ts';
import { handleGet, handleList } from './read-handlers.ts';
import { parseRequestInfo, type RequestInfo, type ResourceRequest } from './request-info.ts';
import type { RequestLog } from './request-log.ts';
import type { RequestRecord } from './types.ts';
import { forbiddenMessage, isAllowed, reviewerFor, type ServiceAccountIdentity } from './rbac.ts';
import { handleReview, isReviewRequest } from './reviews.ts';
import { handleScale } from './scale.ts';
import { wantsTable } from './table.ts';
import type { WatchHub } from './watch-stream.ts';
import {
  handleCreate,
  handleDelete,
  handleDeleteCollection,
  handlePatch,
  handleUpdate,
  type WriteInput,
} from './write-handlers.ts';

/** Everything the pipeline reads. */
export interface PipelineContext {
  state: ClusterState;
  faults: FaultSet;
  log: RequestLog;
  watches: WatchHub;
  token: string | undefined;
  /** Service-account tokens minted by TokenRequest, authorized by stored RBAC objects (`rbac: true`). */
  rbac: { tokens: Map<string, ServiceAccountIdentity> } | undefined;
  /** host:port as clients reach it. */
  serverAddress(): string;
  /**
   * The `Host` rule (DNS rebinding, src/http/origin.ts): a page whose name is re-pointed at this
   * address must not read the cluster. Undefined when the request may go on.
   */
  hostGuard?: RequestGuard;
  /** Responses held open by `hang` faults or pending latency, ended on close. */
  held: Set<ServerResponse>;
  timers: Set<NodeJS.Timeout>;
}

function hasToken(req: IncomingMessage, token: string): boolean {
  const h = req.headers['authorization'];
  return typeof h === 'string' && h === `Bearer ${token}`;
}

function bearerOf(req: IncomingMessage): string | undefined {
  const h = req.headers['authorization'];
  return typeof h === 'string' && h.startsWith('Bearer ') ? h.slice('Bearer '.length) : undefined;
}

/**
 * Authentication and, for service-account tokens, RBAC: undefined when the request may proceed,
 * else the failure to answer. Without `rbac`, only the one optional bearer token counts.
 */
function authenticate(ctx: PipelineContext, req: IncomingMessage, info: RequestInfo): ApiFailure | undefined {
  const bearer = bearerOf(req);
  const sa = ctx.rbac !== undefined && bearer !== undefined ? ctx.rbac.tokens.get(bearer) : undefined;
  if (sa !== undefined) {
    // The review APIs are open to every authenticated user (the default system:basic-user binding).
    if (info.kind === 'resource' && !isReviewRequest(info) && !isAllowed(ctx.state, sa, info))
      return makeFailure(403, forbiddenMessage(sa, info), undefined, 'Forbidden');
    return undefined;
  }
  if (ctx.token !== undefined && !hasToken(req, ctx.token)) return makeFailure(401, 'Unauthorized');
  // With RBAC on, a bearer token the emulator never issued is refused, as the apiserver refuses it.
  if (ctx.rbac !== undefined && bearer !== undefined && bearer !== ctx.token) return makeFailure(401, 'Unauthorized');
  return undefined;
}

/** Whether an Accept header allows a JSON answer (no header, a wildcard or application/json, with any parameters). */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((range) => {
    const media = (range.split(';')[0] ?? '').trim().toLowerCase();
    return media === 'application/json' || media === '*/*' || media === 'application/*' || media === '';
  });
}

/** Creates the request listener. */
export function createPipeline(ctx: PipelineContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const refusal = ctx.hostGuard?.(req);
    if (refusal !== undefined) {
      // Before the request log and faults: a refused page's request is not the cluster's traffic.
      sendFailure(res, makeFailure(421, refusal.message));
      return;
    }
    try {
      handleRequest(ctx, req, res);
    } catch (e) {
      // Malformed input must never take the server down; answer like the apiserver would.
      sendFailure(res, makeFailure(400, `malformed request: ${(e as Error).message}`));
    }
  };
}

function handleRequest(ctx: PipelineContext, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://emulator');
  const info = parseRequestInfo(req.method ?? 'GET', url);
  const resource = info.kind === 'resource' ? info : undefined;
  const record = ctx.log.add({
    verb: info.verb,
    method: req.method ?? 'GET',
    path: url.pathname,
    group: resource?.group ?? '',
    resource: resource?.plural ?? '',
    ...(resource?.namespace !== undefined ? { namespace: resource.namespace } : {}),
    status: 0,
    ...(req.headers['user-agent'] !== undefined ? { userAgent: req.headers['user-agent'] } : {}),
    at: Date.now(),
  });
  res.on('finish', () => {
    if (record.status === 0) record.status = res.statusCode;
  });
  res.on('close', () => {
    record.endedAt = Date.now();
  });
  // Faults act first, as the network and the server's own troubles come before authentication.
  const kind = resource
    ? (ctx.state.registry.findByResource(resource.group, resource.version, resource.plural)?.kind ?? '')
    : '';
  const decision = ctx.faults.decide({
    verb: info.verb,
    group: resource?.group ?? '',
    resource: resource?.plural ?? '',
    kind,
    namespace: resource?.namespace,
  });
  const proceed = (): void => {
    const rule = decision.terminal;
    if (rule === undefined) {
      const refused = authenticate(ctx, req, info);
      if (refused !== undefined) {
        record.status = refused.code;
        sendFailure(res, refused);
        return;
      }
      void dispatch(ctx, info, url, req, res, record);
      return;
    }
    if (rule.effect === 'reset') {
      record.status = 0;
      const socket = req.socket as typeof req.socket & { resetAndDestroy?: () => void };
      if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
      else socket.destroy();
      return;
    }
    if (rule.effect === 'hang') {
      ctx.held.add(res);
      res.on('close', () => ctx.held.delete(res));
      return;
    }
    const failure = makeFaultFailure(
      rule.statusCode ?? 500,
      resource?.group ?? '',
      resource?.plural ?? '',
      rule.retryAfterSeconds,
    );
    record.status = failure.code;
    sendFailure(res, failure);
  };
  if (decision.latencyMs > 0) {
    ctx.held.add(res);
    const timer = setTimeout(() => {
      ctx.timers.delete(timer);
      ctx.held.delete(res);
      if (!res.destroyed) proceed();
    }, decision.latencyMs);
    ctx.timers.add(timer);
  } else {
    proceed();
  }
}

async function dispatch(
  ctx: PipelineContext,
  info: RequestInfo,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  record: RequestRecord,
): Promise<void> {
  try {
    if (info.kind === 'resource') {
      record.status = await dispatchResource(ctx, info, url, req, res);
      return;
    }
    if (info.kind === 'other') {
      const p = info.path.join('/');
      if (p === 'healthz' || p === 'livez' || p === 'readyz') {
        res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end('ok');
        return;
      }
      sendFailure(res, makeFailure(404, 'the server could not find the requested resource'));
      return;
    }
    serveDiscovery(ctx, info.path, req, res);
  } catch (e) {
    sendFailure(res, makeFailure(500, `Internal error occurred: ${(e as Error).message}`));
  }
}

function serveDiscovery(ctx: PipelineContext, path: string[], req: IncomingMessage, res: ServerResponse): void {
  const registry = ctx.state.registry;
  const notFound = (): void => sendFailure(res, makeFailure(404, 'the server could not find the requested resource'));
  const [head, a, b] = path;
  if (head === 'version') return sendJson(res, 200, buildVersion());
  if (head === 'openapi') {
    if (a === 'v2') {
      const accept = req.headers['accept'] ?? '';
      if (accept !== '' && !accept.includes('application/json') && !accept.includes('*/*')) {
        return sendFailure(
          res,
          makeFailure(406, 'only application/json is served for /openapi/v2', undefined, 'NotAcceptable'),
        );
      }
      return sendJson(res, 200, buildOpenApiV2(registry));
    }
    if (a === 'v3' && path.length === 2) return sendJson(res, 200, buildOpenApiV3Index(registry));
    if (a === 'v3') {
      const doc = buildOpenApiV3GroupVersion(registry, path.slice(2));
      return doc ? sendJson(res, 200, doc) : notFound();
    }
    return notFound();
  }
  const aggregated = wantsAggregated(req.headers['accept']);
  if (head === 'api') {
    if (a === undefined) {
      return aggregated
        ? sendJson(res, 200, buildAggregated(registry, '/api'), AGGREGATED_CONTENT_TYPE)
        : sendJson(res, 200, buildCoreVersions(ctx.serverAddress()));
    }
    const list = buildResourceList(registry, '', a);
    return list ? sendJson(res, 200, list) : notFound();
  }
  if (head === 'apis') {
    if (a === undefined)
      return aggregated
        ? sendJson(res, 200, buildAggregated(registry, '/apis'), AGGREGATED_CONTENT_TYPE)
        : sendJson(res, 200, buildGroupList(registry));
    if (b === undefined) {
      const group = buildGroup(registry, a);
      return group ? sendJson(res, 200, group) : notFound();
    }
    const list = buildResourceList(registry, a, b);
    return list ? sendJson(res, 200, list) : notFound();
  }
  notFound();
}

async function dispatchResource(
  ctx: PipelineContext,
  info: ResourceRequest,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<number> {
  if (isReviewRequest(info)) {
    const body = info.verb === 'create' ? await readBodyBytes(req) : Buffer.alloc(0);
    if (!Buffer.isBuffer(body)) {
      sendFailure(res, body);
      return body.code;
    }
    const bearer = bearerOf(req);
    const sa = ctx.rbac !== undefined && bearer !== undefined ? ctx.rbac.tokens.get(bearer) : undefined;
    return handleReview(
      info,
      body,
      req.headers['content-type'] ?? 'application/json',
      res,
      sa === undefined ? undefined : reviewerFor(ctx.state, sa),
    );
  }
  const type = ctx.state.registry.findByResource(info.group, info.version, info.plural);
  if (!type) {
    const failure = makeFailure(404, 'the server could not find the requested resource');
    sendFailure(res, failure);
    return failure.code;
  }
  if (!type.namespaced && info.namespace !== undefined && info.plural !== 'namespaces') {
    const failure = makeFailure(404, 'the server could not find the requested resource');
    sendFailure(res, failure);
    return failure.code;
  }
  if (!acceptsJson(req.headers['accept'])) {
    // Answers are JSON only; a client that accepts nothing else must hear so, not get bytes it cannot read.
    const failure = makeFailure(
      406,
      'only the following media types are accepted: application/json',
      undefined,
      'NotAcceptable',
    );
    sendFailure(res, failure);
    return failure.code;
  }
  const params = url.searchParams;
  if (info.subresource === 'scale' && info.name !== undefined) {
    if (info.verb !== 'get' && params.has('dryRun')) {
      const failure = makeFailure(400, 'dryRun is not supported on the scale subresource by this emulator');
      sendFailure(res, failure);
      return failure.code;
    }
    const body = info.verb === 'get' ? '' : await readBody(req);
    if (typeof body !== 'string') {
      sendFailure(res, body);
      return body.code;
    }
    return handleScale(
      ctx.state,
      { type, info, body, contentType: req.headers['content-type'] ?? 'application/json' },
      res,
    );
  }
  const format = { table: wantsTable(req.headers['accept']), includeObject: params.get('includeObject') };
  switch (info.verb) {
    case 'get':
      handleGet(ctx.state, { type, info, params, format }, res);
      return res.statusCode;
    case 'list':
      handleList(ctx.state, { type, info, params, format }, res);
      return res.statusCode;
    case 'watch':
      return ctx.watches.serve({ type, info, params, format }, req, res);
    default:
      break;
  }
  const rawBody = await readBodyBytes(req);
  if (!Buffer.isBuffer(rawBody)) {
    sendFailure(res, rawBody);
    return rawBody.code;
  }
  const body = rawBody.toString('utf8');
  const dryRun = params.getAll('dryRun').filter((v) => v !== '');
  if (dryRun.some((v) => v !== 'All')) {
    const failure = makeFailure(400, `dryRun: Unsupported value: "${dryRun.join(',')}": supported values: "All"`);
    sendFailure(res, failure);
    return failure.code;
  }
  const input: WriteInput = {
    type,
    info,
    params,
    body,
    rawBody,
    contentType: req.headers['content-type'] ?? 'application/json',
    dryRun: dryRun.length > 0,
  };
  switch (info.verb) {
    case 'create':
      return handleCreate(
        ctx.state,
        input,
        res,
        ctx.rbac === undefined ? undefined : (token, sa) => ctx.rbac?.tokens.set(token, sa),
      );
    case 'update':
      return handleUpdate(ctx.state, input, res);
    case 'patch':
      return handlePatch(ctx.state, input, res);
    case 'delete':
      return handleDelete(ctx.state, input, res);
    case 'deletecollection':
      return handleDeleteCollection(ctx.state, input, res);
    default: {
      const failure = makeFailure(405, 'the server does not allow this method on the requested resource');
      sendFailure(res, failure);
      return failure.code;
    }
  }
}
