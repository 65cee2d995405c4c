/**
 * Headless Chromium (Debian's package) driven by playwright-core: no browser download. Playwright
 * gives each launch a fresh temporary profile.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';
import { PROJECT_ROOT } from '../../src/runtime/paths.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where tests save screenshots. */
export const TEST_OUTPUT = path.join(PROJECT_ROOT, 'test-output');

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  }
  mkdirSync(TEST_OUTPUT, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
