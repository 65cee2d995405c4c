/** A request's budget of revision text and diff time (ManifestVersion.changes): past it, markers instead of more. */
import { describe, expect, it } from 'vitest';
import { createTextBudget } from '../../../src/graphql/loaders.ts';

describe('the revision text budget of a request', () => {
  it('stops computing diffs once a request has spent its diff time', () => {
    const budget = createTextBudget(1000, 5);
    const spent = budget.timed((timeoutMs) => {
      const until = performance.now() + timeoutMs + 1;
      while (performance.now() < until);
      return 'computed';
    });
    expect(spent).toBe('computed');
    expect(budget.timed(() => 'again')).toBeNull();
  });

  it('spends a request budget across texts, then returns only a marker', () => {
    const budget = createTextBudget(100);
    expect(budget.take('x'.repeat(60) + '\n', 1000)).toEqual({ text: 'x'.repeat(60) + '\n', truncated: false });
    const second = budget.take('y'.repeat(30) + '\n' + 'z'.repeat(30) + '\n', 1000);
    expect(second.truncated).toBe(true);
    expect(second.text.startsWith('y'.repeat(30) + '\n# ... truncated')).toBe(true);
    expect(budget.take('w\n', 1000)).toEqual({
      text: "# omitted by phaselog: this request's 100 bytes of revision text are spent\n",
      truncated: true,
    });
  });
});
