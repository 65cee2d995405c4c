/**
 * Small HTTP helpers: body reading with a size cap and JSON/Status answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeFailure, type ApiFailure } from './api-status.ts';

/** Largest request body accepted (the apiserver's default limit is 3 MiB per object; lists loaded in one go need more). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads the request body as text, or a 413 failure when too large. */
export async function readBody(req: IncomingMessage): Promise<string | ApiFailure> {
  const bytes = await readBodyBytes(req);
  return Buffer.isBuffer(bytes) ? bytes.toString('utf8') : bytes;
}

/** Reads the request body as bytes (protobuf bodies are binary), or a 413 failure when too large. */
export function readBodyBytes(req: IncomingMessage): Promise<Buffer | ApiFailure> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        failed = true;
        resolve(makeFailure(413, 'Request entity too large: limit is 67108864'));
        req.resume();
        return;
      }
      if (!failed) chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', () => resolve(makeFailure(400, 'error reading request body')));
  });
}

/** Sends a JSON answer (already serialised or not). */
export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

/** Sends a Status failure (with Retry-After when it carries one). */
export function sendFailure(res: ServerResponse, failure: ApiFailure): void {
  if (failure.retryAfterSeconds !== undefined && !res.headersSent)
    res.setHeader('Retry-After', String(failure.retryAfterSeconds));
  sendJson(res, failure.code, failure.body);
}
