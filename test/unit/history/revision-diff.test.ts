/** Stored revisions as YAML and unified diffs, with their size bounds. */
import { describe, expect, it } from 'vitest';
import {
  capText,
  DiffContextError,
  DIFF_MAX_BYTES,
  MAX_EDIT_LENGTH,
  renderRevisionYaml,
  unifiedDiff,
} from '../../../src/history/revision-diff.ts';

describe('revision YAML and diffs', () => {
  it('renders apiVersion, kind, metadata, spec first and the rest by name, whatever order jsonb kept', () => {
    expect(
      renderRevisionYaml({
        spec: { b: 1, a: 2 },
        kind: 'ConfigMap',
        data: { z: '1' },
        metadata: { name: 'x' },
        apiVersion: 'v1',
      }),
    ).toBe('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\nspec:\n  a: 2\n  b: 1\ndata:\n  z: "1"\n');
  });

  it('cuts a long text at a line end and says how much it left out', () => {
    const text = 'a'.repeat(10) + '\n' + 'b'.repeat(10) + '\n';
    expect(capText(text, 15)).toEqual({
      text: 'aaaaaaaaaa\n# ... truncated by phaselog: 11 more bytes (limit 15 bytes)\n',
      truncated: true,
    });
    expect(capText(text, 100)).toEqual({ text, truncated: false });
  });

  it('refuses a negative, fractional or huge context', () => {
    for (const context of [-1, 1.5, 1001, Number.POSITIVE_INFINITY])
      expect(() => unifiedDiff({ text: 'a\n', label: 'x' }, { text: 'b\n', label: 'y' }, context)).toThrow(
        DiffContextError,
      );
  });

  it('gives an empty diff for equal texts and caps a huge one', () => {
    expect(unifiedDiff({ text: 'a\n', label: 'x' }, { text: 'a\n', label: 'y' }).text).toBe('');
    // 400 changed lines of 200 bytes: a diff of some 160 KB.
    const lines = (p: string) =>
      Array.from({ length: 400 }, (_, i) => `${p}-${i}-${'x'.repeat(190)}`).join('\n') + '\n';
    const diff = unifiedDiff({ text: lines('a'), label: 'x' }, { text: lines('b'), label: 'y' });
    expect(diff.truncated).toBe(true);
    expect(Buffer.byteLength(diff.text)).toBeLessThanOrEqual(DIFF_MAX_BYTES + 100);
    expect(diff.text).toMatch(/# \.\.\. truncated by phaselog: \d+ more bytes \(limit 65536 bytes\)\n$/);
  });

  it('does not compute a diff whose edit script is longer than the limit, and says so', () => {
    const lines = (p: string) => Array.from({ length: MAX_EDIT_LENGTH }, (_, i) => `${p}${i}`).join('\n') + '\n';
    const diff = unifiedDiff({ text: lines('a'), label: 'x' }, { text: lines('b'), label: 'y' });
    expect(diff).toEqual({
      text: `--- before (x)\n+++ after (y)\n# diff not computed by phaselog: more than ${MAX_EDIT_LENGTH} changed lines, or out of time\n`,
      truncated: true,
    });
  });
});
