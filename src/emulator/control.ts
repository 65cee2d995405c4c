/**
 * The emulator's fault-control endpoint: a small HTTP API on its own listener, so the
 * `phaselog emulator fault` command (or any script) can give a running emulator faults from outside
 * its process. It listens apart from the emulated clusters so that a `hang` or `refuse` fault on a
 * cluster never blocks the request that clears it.
 *
 * Every request needs `Authorization: Bearer <token>` (compared in constant time); requests that
 * carry an `Origin` header (browsers add it to cross-origin and to every POST/DELETE) are refused,
 * so a web page the user visits cannot drive it.
 *
 *   GET    /v1/faults                    every cluster's faults
 *   POST   /v1/clusters/<name>/faults    add one (body: {@link FaultRequest}); 201 with the fault
 *   DELETE /v1/clusters/<name>/faults    clear the cluster's faults and refusal
 */
import { rm, writeFile } from 'node:fs/promises';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { Emulator, EmulatorVerb, FaultRule } from './types.ts';

/** What a control client asks for: one fault on one cluster. */
export interface FaultRequest {
  effect: 'reset' | 'refuse' | 'hang' | 'latency' | 'status';
  /** For `status`: the HTTP code, 400-599. */
  statusCode?: number;
  /** For `latency`: the delay added to every matching request. */
  latencyMs?: number;
  /** Remove the fault after this long. */
  forMs?: number;
  /** Hit only this many matching requests (not for `refuse`). */
  times?: number;
  /** Hit only matching requests (not for `refuse`, which is about the whole listener). */
  match?: FaultRule['match'];
}

/** One fault as the control endpoint reports it. */
export interface ControlledFault {
  id: string;
  cluster: string;
  effect: FaultRequest['effect'];
  statusCode?: number;
  latencyMs?: number;
  match?: FaultRule['match'];
  /** Hits left, for faults given `times`. */
  remaining?: number;
  /** RFC 3339 time the fault ends, for faults given `forMs`. */
  expiresAt?: string;
}

/** Options of {@link startFaultControl}. */
export interface FaultControlOptions {
  /** The emulated clusters by name. */
  clusters: Record<string, Emulator>;
  /** Bearer token clients must send. @default 32 random bytes, base64url */
  token?: string;
  /** @default '127.0.0.1' */
  host?: string;
  /** @default 0 (ephemeral) */
  port?: number;
}

/**
 * Write where a control endpoint listens and its token for `phaselog emulator fault` to read: a file
 * only its owner may read (0600, made fresh so an older file's wider mode cannot stick).
 */
export async function writeControlFile(
  file: string,
  control: Pick<FaultControl, 'url' | 'token'>,
  clusters: readonly string[],
): Promise<void> {
  await rm(file, { force: true });
  await writeFile(file, `${JSON.stringify({ url: control.url, token: control.token, clusters }, null, 2)}\n`, {
    mode: 0o600,
    flag: 'wx',
  });
}

/** A running control endpoint. */
export interface FaultControl {
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

const VERBS: [EmulatorVerb, ...EmulatorVerb[]] = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'delete',
  'deletecollection',
  'discovery',
];
const MAX_BODY = 64 * 1024;

const faultRequestSchema = z
  .object({
    effect: z.enum(['reset', 'refuse', 'hang', 'latency', 'status']),
    statusCode: z
      .number()
      .int()
      .min(400, 'statusCode must be an HTTP error code (400-599)')
      .max(599, 'statusCode must be an HTTP error code (400-599)')
      .optional(),
    latencyMs: z.number().int().positive('latencyMs must be a positive number of milliseconds').optional(),
    forMs: z.number().int().positive('forMs must be a positive number of milliseconds').optional(),
    times: z.number().int().positive('times must be a positive integer').optional(),
    match: z
      .object({
        verb: z.enum(VERBS).optional(),
        group: z.string().optional(),
        resource: z.string().optional(),
        kind: z.string().optional(),
        namespace: z.string().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.effect === 'latency' && r.latencyMs === undefined)
      ctx.addIssue({ code: 'custom', message: 'a latency fault needs latencyMs' });
    if (r.effect !== 'latency' && r.latencyMs !== undefined)
      ctx.addIssue({ code: 'custom', message: 'latencyMs only applies to latency faults' });
    if (r.effect === 'status' && r.statusCode === undefined)
      ctx.addIssue({ code: 'custom', message: 'a status fault needs statusCode' });
    if (r.effect !== 'status' && r.statusCode !== undefined)
      ctx.addIssue({ code: 'custom', message: 'statusCode only applies to status faults' });
    if (r.effect === 'refuse' && (r.match !== undefined || r.times !== undefined))
      ctx.addIssue({ code: 'custom', message: 'refuse stops the whole listener; it takes no match or times' });
  });

interface Entry {
  fault: ControlledFault;
  /** The rule given to the emulator, found again in `faults()` by its `match` object's identity; absent for refuse. */
  rule?: FaultRule;
  remove(): Promise<void>;
  timer?: NodeJS.Timeout;
}

function sameToken(given: string, expected: string): boolean {
  // Hashing first makes the comparison constant-time whatever the lengths.
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
  });
  res.end(text);
}

function sendError(res: ServerResponse, code: number, message: string): void {
  send(res, code, { error: message });
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch {
        reject(new Error('body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** Starts the control endpoint; resolves once it listens. */
export async function startFaultControl(options: FaultControlOptions): Promise<FaultControl> {
  const token = options.token ?? randomBytes(32).toString('base64url');
  if (token.length < 16) throw new Error('the control token must be at least 16 characters');
  const host = options.host ?? '127.0.0.1';
  const entries = new Map<string, Entry>();
  let nextId = 1;

  const dropEntry = (id: string): void => {
    const e = entries.get(id);
    if (!e) return;
    entries.delete(id);
    if (e.timer) clearTimeout(e.timer);
  };

  // Forgets entries whose rule the emulator dropped (used up its `times`) or that were cleared in-process.
  const current = (): ControlledFault[] => {
    for (const [id, e] of entries) {
      if (e.rule === undefined) {
        if (!options.clusters[e.fault.cluster]?.refusing) dropEntry(id);
        continue;
      }
      const live = options.clusters[e.fault.cluster]?.faults().find((f) => f.rule.match === e.rule?.match);
      if (!live) dropEntry(id);
      else if (Number.isFinite(live.remaining)) e.fault.remaining = live.remaining;
    }
    return [...entries.values()].map((e) => e.fault);
  };

  const addFault = async (cluster: string, em: Emulator, request: FaultRequest): Promise<ControlledFault> => {
    const id = String(nextId++);
    const fault: ControlledFault = { id, cluster, effect: request.effect };
    if (request.statusCode !== undefined) fault.statusCode = request.statusCode;
    if (request.latencyMs !== undefined) fault.latencyMs = request.latencyMs;
    if (request.match !== undefined) fault.match = request.match;
    if (request.times !== undefined) fault.remaining = request.times;
    let entry: Entry;
    if (request.effect === 'refuse') {
      await em.refuseConnections(true);
      // Another refusal of the same cluster still in force keeps the listener closed.
      const othersRefusing = (): boolean =>
        [...entries.values()].some((e) => e !== entry && e.rule === undefined && e.fault.cluster === cluster);
      entry = { fault, remove: async () => (othersRefusing() ? undefined : em.refuseConnections(false)) };
    } else {
      // A fresh match object per rule lets `current()` tell equal rules apart by identity.
      const rule: FaultRule = { effect: request.effect, match: { ...request.match } };
      if (request.statusCode !== undefined) rule.statusCode = request.statusCode;
      if (request.latencyMs !== undefined) rule.latencyMs = request.latencyMs;
      if (request.times !== undefined) rule.times = request.times;
      const remover = em.injectFault(rule);
      entry = { fault, rule, remove: async () => remover() };
    }
    if (request.forMs !== undefined) {
      fault.expiresAt = new Date(Date.now() + request.forMs).toISOString();
      entry.timer = setTimeout(() => {
        dropEntry(id);
        void entry.remove();
      }, request.forMs);
    }
    entries.set(id, entry);
    return fault;
  };

  const clearCluster = async (cluster: string, em: Emulator): Promise<number> => {
    let removed = 0;
    for (const [id, e] of entries) {
      if (e.fault.cluster !== cluster) continue;
      dropEntry(id);
      removed++;
    }
    em.clearFaults();
    await em.refuseConnections(false);
    return removed;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.headers['origin'] !== undefined)
      return sendError(res, 403, 'requests from browsers (with an Origin header) are refused');
    const auth = req.headers['authorization'];
    const given = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : '';
    if (given === '' || !sameToken(given, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendError(res, 401, 'missing or wrong control token');
    }
    const url = new URL(req.url ?? '/', 'http://control');
    const parts = url.pathname.split('/').filter((p) => p !== '');
    if (parts.length === 2 && parts[0] === 'v1' && parts[1] === 'faults') {
      if (req.method !== 'GET') return sendError(res, 405, 'use GET');
      return send(res, 200, { clusters: Object.keys(options.clusters), faults: current() });
    }
    if (parts.length !== 4 || parts[0] !== 'v1' || parts[1] !== 'clusters' || parts[3] !== 'faults')
      return sendError(res, 404, 'no such control path');
    const cluster = decodeURIComponent(parts[2] ?? '');
    const em = Object.hasOwn(options.clusters, cluster) ? options.clusters[cluster] : undefined;
    if (!em)
      return sendError(
        res,
        400,
        `unknown cluster "${cluster}"; this emulator serves: ${Object.keys(options.clusters).join(', ')}`,
      );
    if (req.method === 'DELETE') return send(res, 200, { cluster, cleared: await clearCluster(cluster, em) });
    if (req.method === 'GET')
      return send(res, 200, { clusters: [cluster], faults: current().filter((f) => f.cluster === cluster) });
    if (req.method !== 'POST') return sendError(res, 405, 'use GET, POST or DELETE');
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return sendError(res, 415, 'send the fault as application/json');
    let body: unknown;
    try {
      body = await readJson(req);
    } catch (e) {
      return sendError(res, 400, (e as Error).message);
    }
    const parsed = faultRequestSchema.safeParse(body);
    if (!parsed.success)
      return sendError(
        res,
        400,
        parsed.error.issues
          .map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message))
          .join('; '),
      );
    return send(res, 201, await addFault(cluster, em, parsed.data as FaultRequest));
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, (e as Error).message);
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        for (const id of [...entries.keys()]) dropEntry(id);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
