/** axe-core run inside a page (injected from node_modules, no network): its serious and critical violations. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';

const AXE = readFileSync(path.join(PROJECT_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** "rule: help (selectors)" per serious or critical violation; empty when there is none. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  // A string: the test's TypeScript has no DOM types, the page has axe and document.
  const violations = (await page.evaluate('axe.run(document).then((result) => result.violations)')) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id}: ${v.help} (${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')})`,
    );
}
