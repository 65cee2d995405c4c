/** Types of scripts/compile.mjs (a plain script, so that bin/phaselog.mjs can run it before anything is compiled). */

/** A hash of the compiler's inputs under `root` as they are on disk now. */
export function fingerprintSources(root: string): string;
/** Whether dist/ was compiled from the sources as they are now (false when there is none). */
export function isBuildCurrent(root: string): boolean;
/** Compiles src/ and workers/ into dist/ and stamps the result; resolves with how many files were compiled. */
export function compileSources(root: string): Promise<number>;
