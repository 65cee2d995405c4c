/**
 * Sends one rendered request to a receiver and classifies the answer. Redirects are not followed:
 * a receiver that moved is a configuration to fix, and following one could carry the signed body
 * (or a Slack URL's path) to another host. At most {@link MAX_ANSWER_BYTES} of an answer are read;
 * the rest is dropped, so a receiver cannot make the worker hold a large body.
 * Errors say what happened in phaselog's words (status code, error kind), never the URL.
 */
import type { RenderedRequest } from './render.ts';

/** Most bytes of a receiver's answer read (only to finish the exchange; the content is unused). */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** What an attempt came to. */
export type SendOutcome = { ok: true; status: number } | { ok: false; retryable: boolean; error: string };

/** Answers a retry cannot change: the receiver refuses the request itself. */
function isPermanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 425 && status !== 429;
}

async function drainCapped(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  let read = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
      if (read > MAX_ANSWER_BYTES) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** POSTs `request` to `url` within `timeoutMs`. */
export async function sendRequest(url: string, request: RenderedRequest, timeoutMs: number): Promise<SendOutcome> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError')
      return { ok: false, retryable: true, error: `no answer within ${timeoutMs} ms` };
    const code = (error as { cause?: { code?: string } }).cause?.code ?? name;
    return { ok: false, retryable: true, error: `request failed: ${code}` };
  }
  await drainCapped(res.body).catch(() => {});
  if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
  if (res.status >= 300 && res.status < 400)
    return {
      ok: false,
      retryable: false,
      error: `HTTP ${res.status}: the receiver redirects; redirects are not followed (configure the final URL)`,
    };
  return { ok: false, retryable: !isPermanentStatus(res.status), error: `HTTP ${res.status}` };
}
