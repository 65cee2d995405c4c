/**
 * The receiver-side signature check exactly as the README shows it ("Verifying a signature"): the
 * ```js block is read from README.md and imported, so the tests' receivers verify with the code a
 * reader copies, and a README example that stops verifying fails the tests.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';

/** The README's `verifyPhaselogSignature(key, rawBody, header, now?, toleranceSeconds?)`. */
export type VerifySignature = (
  key: string,
  rawBody: Buffer | string,
  header: string | undefined,
  now?: number,
  toleranceSeconds?: number,
) => boolean;

let loaded: Promise<VerifySignature> | undefined;

/** Imports the README's verification function (once per process). */
export function readmeVerifier(): Promise<VerifySignature> {
  loaded ??= (async () => {
    const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const block = [...readme.matchAll(/```js\n([\s\S]*?)```/g)]
      .map((m) => m[1] as string)
      .find((code) => code.includes('export function verifyPhaselogSignature'));
    if (block === undefined) throw new Error('README.md has no ```js block exporting verifyPhaselogSignature');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'phaselog-readme-')), 'verify.mjs');
    writeFileSync(file, block);
    const module = (await import(pathToFileURL(file).href)) as { verifyPhaselogSignature: VerifySignature };
    return module.verifyPhaselogSignature;
  })();
  return loaded;
}
