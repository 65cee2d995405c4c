import { describe, expect, it } from 'vitest';
import { ObservationMemos, type ObjectVersion } from '../../../src/snapshot/memos.ts';

const at = (version: string, extra: Partial<ObjectVersion> = {}): ObjectVersion => ({ cluster: 'prod', object: 'uid-1', version, redaction: 'default', ...extra });

describe('hashes a worker remembers of listed objects', () => {
  it('serve only the version, cluster and redaction they were made for', () => {
    const memos = new ObservationMemos();
    memos.rememberListedHash(at('7'), 'h7');
    expect(memos.listedHash(at('7'))).toBe('h7');
    expect(memos.listedHash(at('8'))).toBeUndefined();
    expect(memos.listedHash(at('7', { cluster: 'staging' }))).toBeUndefined();
    expect(memos.listedHash(at('7', { object: 'uid-2' }))).toBeUndefined();
    expect(memos.listedHash(at('7', { redaction: 'strict' }))).toBeUndefined();
  });

  it('are one per object: a new version takes the place of the old one', () => {
    const memos = new ObservationMemos({ listedRevisions: 2 });
    memos.rememberListedHash(at('7'), 'h7');
    memos.rememberListedHash(at('8'), 'h8');
    memos.rememberListedHash(at('9'), 'h9');
    expect(memos.listedHash(at('7'))).toBeUndefined();
    // Three versions of one object did not fill an index of two: a second object still fits.
    memos.rememberListedHash(at('1', { object: 'uid-2' }), 'other');
    expect(memos.listedHash(at('9'))).toBe('h9');
    expect(memos.listedHash(at('1', { object: 'uid-2' }))).toBe('other');
  });

  it('start over when more objects than the limit were remembered', () => {
    const memos = new ObservationMemos({ listedRevisions: 2 });
    memos.rememberListedHash(at('1', { object: 'a' }), 'a1');
    memos.rememberListedHash(at('1', { object: 'b', cluster: 'staging' }), 'b1');
    memos.rememberListedHash(at('1', { object: 'c' }), 'c1');
    expect(memos.listedHash(at('1', { object: 'a' }))).toBeUndefined();
    expect(memos.listedHash(at('1', { object: 'b', cluster: 'staging' }))).toBeUndefined();
    expect(memos.listedHash(at('1', { object: 'c' }))).toBe('c1');
  });

});

describe('manifest hashes a worker remembers', () => {
  it('serve the parsed inventory they were made for, under the same redaction', () => {
    const memos = new ObservationMemos();
    const phase = { id: 'shop' };
    memos.rememberManifestHash(phase, 'default', { hash: 'm7', entries: 3 });
    expect(memos.manifestHash(phase, 'default')).toMatchObject({ hash: 'm7', entries: 3 });
    expect(memos.manifestHash(phase, 'strict')).toBeUndefined();
    // An equal phase parsed from another version of the object is another phase.
    expect(memos.manifestHash({ id: 'shop' }, 'default')).toBeUndefined();
    memos.rememberManifestHash(phase, 'strict', { hash: 's7', entries: 3 });
    expect(memos.manifestHash(phase, 'strict')?.hash).toBe('s7');
    expect(memos.manifestHash(phase, 'default')).toBeUndefined();
  });
});
