/**
 * The phase's manifest versions, newest first: entries added and removed, member revisions that
 * changed, and a line diff of the inventory object (as stored, redacted) against the version before.
 * The API keeps revision ids of member objects but not their content, so that diff is the
 * inventory's own.
 */
import { diffLines } from 'diff';
import { useEffect, useMemo, useRef } from 'react';
import { useQuery } from './api.ts';
import { CliHint, phaseArg } from './cli-hint.tsx';
import { navigate, withParams, type Place } from './router.tsx';
import { formatTime } from './status.tsx';

interface Entry {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

interface Version {
  previousHash: string | null;
  added: Entry[];
  removed: Entry[];
  revisionsChanged: { key: string; fromRevision: string | null; toRevision: string | null }[];
  manifest: { hash: string; entryCount: number; from: string; to: string | null; source: unknown };
}

const MANIFESTS = `query Manifests($id: ID!) {
  phase(id: $id) { manifests(first: 20) { edges { node {
    previousHash added { group kind namespace name } removed { group kind namespace name }
    revisionsChanged { key fromRevision toRevision }
    manifest { hash entryCount from to source }
  } } } }
}`;

const entryText = (e: Entry) => `${e.group ? e.group + '/' : ''}${e.kind} ${e.namespace ? e.namespace + '/' : ''}${e.name}`;

/** Stable text of an inventory object for diffing: keys sorted, two-space indentation. */
function canonical(value: unknown): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sort(x)])) : v;
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
        const shown = !part.added && !part.removed && lines.length > 7 ? [...lines.slice(0, 3), '…', ...lines.slice(-3)] : lines;
        return (
          <span key={index} className={part.added ? 'diff-add' : part.removed ? 'diff-del' : 'diff-same'}>
            {shown.map((line) => `${mark} ${line}`).join('\n') + '\n'}
          </span>
        );
      })}
    </pre>
  );
}

/** `refreshAt` changes when the page learns of a change: the list is read again then. */
export function ManifestVersions({ place, phase, refreshAt }: { place: Place; phase: { id: string; cluster: string; namespace: string; name: string }; refreshAt: number }) {
  const { data, error, reload } = useQuery<{ phase: { manifests: { edges: { node: Version }[] } } | null }>(MANIFESTS, { id: phase.id });
  const first = useRef(refreshAt);
  useEffect(() => {
    if (refreshAt !== first.current) reload();
  }, [refreshAt, reload]);
  const versions = data?.phase?.manifests.edges.map((e) => e.node) ?? [];
  const open = place.params.get('diff');
  return (
    <section aria-labelledby="manifests-title">
      <h2 id="manifests-title">Manifest versions</h2>
      {error ? <p role="alert" className="error">{error.message}</p> : null}
      <ol className="versions">
        {versions.map((v, index) => {
          const before = versions[index + 1];
          // The URL names a version by its hash's first 12 characters, as the page shows it.
          const isOpen = open === v.manifest.hash.slice(0, 12);
          return (
            <li key={v.manifest.hash + v.manifest.from}>
              <div>
                <strong>{formatTime(v.manifest.from)}</strong> – {v.manifest.to ? formatTime(v.manifest.to) : 'now'} · {v.manifest.entryCount} entries · <code>{v.manifest.hash.slice(0, 12)}</code>{' '}
                <button type="button" className="linkish" onClick={() => navigate(withParams(place, { at: v.manifest.from }))}>view the phase then</button>
              </div>
              {v.previousHash === null ? <div className="muted">first version recorded</div> : null}
              {v.added.length ? <div className="diff-add">+ added: {v.added.map(entryText).join(', ')}</div> : null}
              {v.removed.length ? <div className="diff-del">− removed: {v.removed.map(entryText).join(', ')}</div> : null}
              {v.revisionsChanged.length ? (
                <div>
                  revisions changed: {v.revisionsChanged.map((r) => `${r.key} (${r.fromRevision ?? '?'} → ${r.toRevision ?? '?'})`).join(', ')}
                </div>
              ) : null}
              {before ? (
                <button type="button" aria-expanded={isOpen} onClick={() => navigate(withParams(place, { diff: isOpen ? undefined : v.manifest.hash.slice(0, 12) }))}>
                  {isOpen ? 'Hide' : 'Show'} inventory diff
                </button>
              ) : null}
              {before && isOpen ? <SourceDiff before={before.manifest.source} after={v.manifest.source} /> : null}
            </li>
          );
        })}
      </ol>
      {versions.length === 0 && data ? <p>No manifest recorded.</p> : null}
      <CliHint command={`phaselog manifest ${phaseArg(phase)} --diff`} />
    </section>
  );
}
