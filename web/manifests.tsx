/**
 * The phase's manifest versions, newest first: entries added and removed, member revisions that
 * changed, and, on demand, a line diff of the inventory object (as stored, redacted) against the
 * version before and the unified diff of each added, removed or revised member's stored revision
 * (ManifestVersion.changes; read for the opened version only, which keeps the list's query cheap).
 */
import { diffLines } from 'diff';
import { useEffect, useMemo, useRef } from 'react';
import { useQuery } from './api.ts';
import { CliHint, phaseArg } from './cli-hint.tsx';
import { navigate, withParams, type Place } from './router.tsx';
import { formatTime } from './status.tsx';
import { formatRef } from '../src/inventory/object-ref.ts';
import type { ObjectChangeAnswer } from '../src/graphql/answers.ts';

interface Entry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What the diff view selects of a member change (no before/after headers: the diff carries them). */
type Change = Omit<ObjectChangeAnswer, 'before' | 'after'>;

interface Version {
  previousHash: string | null;
  added: Entry[];
  removed: Entry[];
  revisionsChanged: { key: string; fromRevision: string | null; toRevision: string | null }[];
  manifest: { hash: string; entryCount: number; from: string; to: string | null; source: unknown };
}

const MANIFESTS = `query Manifests($id: ID!) {
  phase(id: $id) { manifests(first: 20) { edges { cursor node {
    previousHash added { group kind namespace name } removed { group kind namespace name }
    revisionsChanged { key fromRevision toRevision }
    manifest { hash entryCount from to source }
  } } } }
}`;

const CHANGES = `query ManifestChanges($id: ID!, $after: String) {
  phase(id: $id) { manifests(first: 1, after: $after) { edges { node {
    manifest { hash }
    changes { key group kind namespace name change withheld diff }
  } } } }
}`;

const entryText = (e: Entry) => formatRef(e);

/** Stable text of an inventory object for diffing: keys sorted, two-space indentation. */
function canonical(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  return JSON.stringify(sort(value), null, 2) + '\n';
}

function SourceDiff({ before, after }: { before: unknown; after: unknown }) {
  const parts = useMemo(() => diffLines(canonical(before), canonical(after)), [before, after]);
  return (
    <pre className="diff" aria-label="Unified diff of the inventory object">
      {parts.map((part, index) => {
        const mark = part.added ? '+' : part.removed ? '-' : ' ';
        const lines = part.value.replace(/\n$/, '').split('\n');
        // Unchanged runs are cut to their edges, as a unified diff shows context.
        const shown =
          !part.added && !part.removed && lines.length > 7 ? [...lines.slice(0, 3), '…', ...lines.slice(-3)] : lines;
        return (
          <span key={index} className={part.added ? 'diff-add' : part.removed ? 'diff-del' : 'diff-same'}>
            {shown.map((line) => `${mark} ${line}`).join('\n') + '\n'}
          </span>
        );
      })}
    </pre>
  );
}

const CHANGE_MARK: Record<Change['change'], string> = { ADDED: '+', REMOVED: '−', CHANGED: '~' };
const CHANGE_WORD: Record<Change['change'], string> = { ADDED: 'added', REMOVED: 'removed', CHANGED: 'changed' };

/** A unified diff as the API gives it, each line classed by its marker (the marker stays: colour is not the only cue). */
function UnifiedDiff({ text, label }: { text: string; label: string }) {
  let inHunks = false;
  const lines = text.replace(/\n$/, '').split('\n');
  return (
    <pre className="diff" aria-label={label}>
      {lines.map((line, index) => {
        // The file headers are the lines before the first hunk (a removed YAML line may start with "--").
        inHunks ||= line.startsWith('@@');
        const kind = !inHunks
          ? 'diff-head'
          : line.startsWith('@@')
            ? 'diff-hunk'
            : line.startsWith('+')
              ? 'diff-add'
              : line.startsWith('-')
                ? 'diff-del'
                : 'diff-same';
        return (
          <span key={index} className={kind}>
            {line + '\n'}
          </span>
        );
      })}
    </pre>
  );
}

/** The content diff of each member the version added, removed or revised, one collapsible block each. */
function MemberDiffs({ phaseId, after, hash }: { phaseId: string; after: string | undefined; hash: string }) {
  const { data, error } = useQuery<{
    phase: { manifests: { edges: { node: { manifest: { hash: string }; changes: Change[] } }[] } } | null;
  }>(CHANGES, { id: phaseId, ...(after ? { after } : {}) });
  if (error)
    return (
      <p role="alert" className="error">
        {error.message}
      </p>
    );
  if (!data) return <p className="muted">Reading the member diffs…</p>;
  const node = data.phase?.manifests.edges[0]?.node;
  if (!node || node.manifest.hash !== hash)
    return <p className="muted">This version is no longer where it was; reload the page.</p>;
  if (node.changes.length === 0) return <p className="muted">No member object changed.</p>;
  return (
    <div className="member-diffs">
      <h3>Member objects (as stored, redacted)</h3>
      {node.changes.map((c) => {
        const title = `${CHANGE_MARK[c.change]} ${entryText(c)} (${CHANGE_WORD[c.change]})`;
        return (
          <details key={c.key} className="member-diff" data-key={c.key}>
            <summary>{title}</summary>
            {c.withheld ? (
              <p className="muted">Content withheld: your token may not read namespace {c.namespace}.</p>
            ) : c.diff === null ? (
              <p className="muted">Content not stored: the object was not observed then, or retention removed it.</p>
            ) : c.diff === '' ? (
              <p className="muted">No difference in the stored content.</p>
            ) : (
              <UnifiedDiff text={c.diff} label={`Unified diff of ${entryText(c)}`} />
            )}
          </details>
        );
      })}
    </div>
  );
}

/** `refreshAt` changes when the page learns of a change: the list is read again then. */
export function ManifestVersions({
  place,
  phase,
  refreshAt,
}: {
  place: Place;
  phase: { id: string; cluster: string; namespace: string; name: string };
  refreshAt: number;
}) {
  const { data, error, reload } = useQuery<{
    phase: { manifests: { edges: { cursor: string; node: Version }[] } } | null;
  }>(MANIFESTS, { id: phase.id });
  const first = useRef(refreshAt);
  useEffect(() => {
    if (refreshAt !== first.current) reload();
  }, [refreshAt, reload]);
  const edges = data?.phase?.manifests.edges ?? [];
  const versions = edges.map((e) => e.node);
  const open = place.params.get('diff');
  return (
    <section aria-labelledby="manifests-title">
      <h2 id="manifests-title">Manifest versions</h2>
      {error ? (
        <p role="alert" className="error">
          {error.message}
        </p>
      ) : null}
      <ol className="versions">
        {versions.map((v, index) => {
          const before = versions[index + 1];
          // The URL names a version by its hash's first 12 characters, as the page shows it.
          const isOpen = open === v.manifest.hash.slice(0, 12);
          return (
            <li key={v.manifest.hash + v.manifest.from}>
              <div>
                <strong>{formatTime(v.manifest.from)}</strong> – {v.manifest.to ? formatTime(v.manifest.to) : 'now'} ·{' '}
                {v.manifest.entryCount} entries · <code>{v.manifest.hash.slice(0, 12)}</code>{' '}
                <button
                  type="button"
                  className="linkish"
                  onClick={() => navigate(withParams(place, { at: v.manifest.from }))}
                >
                  view the phase then
                </button>
              </div>
              {v.previousHash === null ? <div className="muted">first version recorded</div> : null}
              {v.added.length ? <div className="diff-add">+ added: {v.added.map(entryText).join(', ')}</div> : null}
              {v.removed.length ? (
                <div className="diff-del">− removed: {v.removed.map(entryText).join(', ')}</div>
              ) : null}
              {v.revisionsChanged.length ? (
                <div>
                  revisions changed:{' '}
                  {v.revisionsChanged
                    .map((r) => `${r.key} (${r.fromRevision ?? '?'} → ${r.toRevision ?? '?'})`)
                    .join(', ')}
                </div>
              ) : null}
              {before ? (
                <button
                  type="button"
                  aria-expanded={isOpen}
                  onClick={() =>
                    navigate(withParams(place, { diff: isOpen ? undefined : v.manifest.hash.slice(0, 12) }))
                  }
                >
                  {isOpen ? 'Hide' : 'Show'} diff
                </button>
              ) : null}
              {before && isOpen ? (
                <>
                  <h3>Inventory object</h3>
                  <SourceDiff before={before.manifest.source} after={v.manifest.source} />
                  {/* The version at index i is the one page of 1 after the cursor of the version before it in the list. */}
                  <MemberDiffs
                    phaseId={phase.id}
                    after={index === 0 ? undefined : edges[index - 1]?.cursor}
                    hash={v.manifest.hash}
                  />
                </>
              ) : null}
            </li>
          );
        })}
      </ol>
      {versions.length === 0 && data ? <p>No manifest recorded.</p> : null}
      <CliHint command={`phaselog manifest ${phaseArg(phase)} --diff`} />
    </section>
  );
}
