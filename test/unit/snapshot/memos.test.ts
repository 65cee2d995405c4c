import { describe, expect, it } from 'vitest';
import { ObservationMemos, type ObjectVersion } from '../../../src/snapshot/memos.ts';

const at = (version: string, extra: Partial<ObjectVersion> = {}): ObjectVersion => ({
  cluster: 'prod',
  object: 'uid-1',
  version,
  redaction: 'default',
  ...extra,
});

describe('revision digests a worker remembers of listed objects', () => {
  it('serve only the version, cluster and redaction they were made for', () => {
    const memos = new ObservationMemos();
    memos.rememberListedDigest(at('7'), 'h7');
    expect(memos.listedDigest(at('7'))).toBe('h7');
    expect(memos.listedDigest(at('8'))).toBeUndefined();
    expect(memos.listedDigest(at('7', { cluster: 'staging' }))).toBeUndefined();
    expect(memos.listedDigest(at('7', { object: 'uid-2' }))).toBeUndefined();
    expect(memos.listedDigest(at('7', { redaction: 'strict' }))).toBeUndefined();
  });

  it('are one per object: a new version takes the place of the old one', () => {
    const memos = new ObservationMemos({ listedRevisions: 2 });
    memos.rememberListedDigest(at('7'), 'h7');
    memos.rememberListedDigest(at('8'), 'h8');
    memos.rememberListedDigest(at('9'), 'h9');
    expect(memos.listedDigest(at('7'))).toBeUndefined();
    // Three versions of one object did not fill an index of two: a second object still fits.
    memos.rememberListedDigest(at('1', { object: 'uid-2' }), 'other');
    expect(memos.listedDigest(at('9'))).toBe('h9');
    expect(memos.listedDigest(at('1', { object: 'uid-2' }))).toBe('other');
  });

  it('start over when more objects than the limit were remembered', () => {
    const memos = new ObservationMemos({ listedRevisions: 2 });
    memos.rememberListedDigest(at('1', { object: 'a' }), 'a1');
    memos.rememberListedDigest(at('1', { object: 'b', cluster: 'staging' }), 'b1');
    memos.rememberListedDigest(at('1', { object: 'c' }), 'c1');
    expect(memos.listedDigest(at('1', { object: 'a' }))).toBeUndefined();
    expect(memos.listedDigest(at('1', { object: 'b', cluster: 'staging' }))).toBeUndefined();
    expect(memos.listedDigest(at('1', { object: 'c' }))).toBe('c1');
  });
});

describe('manifest hashes a worker remembers', () => {
  it('serve the parsed inventory they were kept on, under the same redaction', () => {
    const memos = new ObservationMemos();
    const parsed = { memo: undefined as unknown };
    memos.rememberManifestHash(parsed, 'default', { hash: 'm7', entries: 3 });
    expect(memos.manifestHash(parsed, 'default')).toMatchObject({ hash: 'm7', entries: 3 });
    expect(memos.manifestHash(parsed, 'strict')).toBeUndefined();
    // Another version of the object is another parse, with nothing remembered on it.
    expect(memos.manifestHash({ memo: undefined }, 'default')).toBeUndefined();
    memos.rememberManifestHash(parsed, 'strict', { hash: 's7', entries: 3 });
    expect(memos.manifestHash(parsed, 'strict')?.hash).toBe('s7');
    expect(memos.manifestHash(parsed, 'default')).toBeUndefined();
    // A slot holding something else (a value another memo kind put there) is not a manifest hash.
    expect(memos.manifestHash({ memo: { redaction: 'default', hash: 'x', entries: 3 } }, 'default')).toBeUndefined();
  });
});
