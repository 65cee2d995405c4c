import { describe, expect, it } from 'vitest';
import {
  classifyKubeError,
  isRetryable,
  KubeRequestError,
  parseRetryAfter,
  type KubeErrorKind,
} from '../../../src/kube/errors.ts';

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:6443`), { code });
}

describe('classifyKubeError', () => {
  it.each<[string, unknown, KubeErrorKind, boolean]>([
    ['a refused connection', socketError('ECONNREFUSED'), 'UNREACHABLE', true],
    ['an unknown host', socketError('ENOTFOUND'), 'UNREACHABLE', true],
    [
      'a fetch failure whose cause is a reset socket',
      Object.assign(new Error('fetch failed'), { cause: { code: 'ECONNRESET' } }),
      'UNREACHABLE',
      true,
    ],
    ['our own request deadline', new KubeRequestError('no answer', { timedOut: true }), 'TIMEOUT', true],
    ['an aborted request', Object.assign(new Error('aborted'), { name: 'AbortError' }), 'TIMEOUT', true],
    ['an API server timeout (504)', new KubeRequestError('gateway', { statusCode: 504 }), 'TIMEOUT', true],
    ['client-node ApiException 401', Object.assign(new Error('HTTP-Code: 401'), { code: 401 }), 'UNAUTHORIZED', false],
    ['client-node watch error 403', Object.assign(new Error('Forbidden'), { statusCode: 403 }), 'FORBIDDEN', false],
    [
      'a 404 on a collection',
      new KubeRequestError('the server could not find the requested resource', { statusCode: 404 }),
      'KIND_NOT_FOUND',
      false,
    ],
    ['a 429', new KubeRequestError('slow down', { statusCode: 429, retryAfterMs: 2000 }), 'THROTTLED', true],
    ['a 500', new KubeRequestError('etcdserver: leader changed', { statusCode: 500 }), 'SERVER_ERROR', true],
    ['something that is not an Error', 'boom', 'SERVER_ERROR', true],
  ])('%s is %s', (_label, err, kind, retryable) => {
    const classified = classifyKubeError(err);
    expect(classified.kind).toBe(kind);
    expect(classified.message.length).toBeGreaterThan(0);
    expect(isRetryable(classified)).toBe(retryable);
  });

  it('keeps Retry-After from a throttled answer', () => {
    expect(
      classifyKubeError(new KubeRequestError('slow down', { statusCode: 429, retryAfterMs: 2000 })).retryAfterMs,
    ).toBe(2000);
  });

  it.each([
    ['seconds', '3', 3000],
    ['an HTTP date 10 s ahead', new Date(1_000_000 + 10_000).toUTCString(), 10_000],
    ['garbage', 'soon', undefined],
    ['nothing', undefined, undefined],
  ])('reads Retry-After given as %s', (_label, value, expected) => {
    expect(parseRetryAfter(value, 1_000_000)).toBe(expected);
  });
});
