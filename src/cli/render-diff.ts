/**
 * `phaselog manifest --diff` as text: per manifest version, each added, removed or revised member
 * with the unified diff of its stored revisions as the API gives it (ManifestVersion.changes:
 * YAML renderings, redacted as stored, cut with a marker when huge). Pure: the caller decides on
 * colour (a TTY and no NO_COLOR) and writes the text.
 */

import { formatRef, painter } from './format.ts';
import type { Colour } from './format.ts';
import type { ObjectChangeAnswer } from '../graphql/answers.ts';

/** One member change, as the API gives it. */
export type DiffChange = ObjectChangeAnswer;

/** One manifest version, as the API gives it. */
export interface DiffVersion {
  manifest: { hash: string; from: string; to: string | null; entryCount: number };
  previousHash: string | null;
  changes: DiffChange[];
}

/** Options of {@link renderManifestDiff}. */
export interface RenderDiffOptions {
  /** ANSI colours (red removed, green added, cyan hunk headers, bold file headers). @default false */
  color?: boolean;
}

/** The CLI's one ref format, re-exported for callers of this module. */
export { formatRef };

const MARK: Record<DiffChange['change'], string> = { ADDED: '+', REMOVED: '-', CHANGED: '~' };
const WORD: Record<DiffChange['change'], string> = { ADDED: 'added', REMOVED: 'removed', CHANGED: 'changed' };

const coloured = painter(true);

function paint(text: string, style: Colour, color: boolean): string {
  return color ? coloured(style, text) : text;
}

/**
 * One line of a unified diff, coloured by what it is; markers and text are kept, so colour is never
 * the only cue. File headers are the lines before the first hunk (a removed YAML line may itself
 * start with `--`).
 */
function paintDiffLine(line: string, inHunks: boolean, color: boolean): string {
  if (!color || line === '') return line;
  if (!inHunks) return paint(line, line.startsWith('#') ? 'cyan' : 'bold', true);
  if (line.startsWith('@@')) return paint(line, 'cyan', true);
  if (line.startsWith('+')) return paint(line, 'green', true);
  if (line.startsWith('-')) return paint(line, 'red', true);
  if (line.startsWith('#')) return paint(line, 'cyan', true);
  return line;
}

/** One member change: a header line, then its diff (or why there is none). */
export function renderChange(change: DiffChange, options: RenderDiffOptions = {}): string {
  const color = options.color ?? false;
  const header = paint(`${MARK[change.change]} ${formatRef(change)} (${WORD[change.change]})`, 'bold', color);
  if (change.withheld) return `${header}\n  (content withheld: the token may not read namespace ${change.namespace})\n`;
  if (change.diff === null)
    return `${header}\n  (content not stored: the object was not observed then, or retention removed it)\n`;
  if (change.diff === '') return `${header}\n  (no difference in the stored content)\n`;
  let inHunks = false;
  const body = change.diff
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => {
      inHunks ||= line.startsWith('@@');
      return paintDiffLine(line, inHunks, color);
    })
    .join('\n');
  return `${header}\n${body}\n`;
}

/** Every version, newest first as given, each with a header line and its member changes. */
export function renderManifestDiff(versions: readonly DiffVersion[], options: RenderDiffOptions = {}): string {
  const color = options.color ?? false;
  const out: string[] = [];
  for (const v of versions) {
    const span = `${v.manifest.from} to ${v.manifest.to ?? 'now'}`;
    const since = v.previousHash === null ? 'first version recorded' : `since ${v.previousHash.slice(0, 12)}`;
    out.push(
      paint(
        `manifest ${v.manifest.hash.slice(0, 12)}  ${span}  ${v.manifest.entryCount} entries, ${since}`,
        'bold',
        color,
      ) + '\n',
    );
    if (v.previousHash !== null && v.changes.length === 0) out.push('  (no member changed)\n');
    // A blank line after each member's block and after a version without any.
    for (const change of v.changes) out.push(renderChange(change, options), '\n');
    if (v.changes.length === 0) out.push('\n');
  }
  return out.join('');
}
