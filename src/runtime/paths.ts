import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** phaselog's install directory (where package.json, schema.graphql and prisma/ are), from src/ or dist/. */
export const PROJECT_ROOT: string = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find phaselog package.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
})();

/** phaselog's version, from package.json. */
export const VERSION: string = (
  JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;
