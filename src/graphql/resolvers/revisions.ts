/**
 * Resolvers of member object changes and their stored revisions (ManifestVersion.changes). Every
 * revision id here was read from the phase's own resources by the phase's resolver, which only
 * runs for a phase the caller may see: no client-given id reaches the revision loader. A member of
 * a namespace the caller may not see (an inventory may list other namespaces' objects) comes
 * `withheld`: no hash, content or diff of it is read or given. Contents
 * load through one DataLoader (one statement for all revisions of a response) and are charged to
 * the request's text budget (loaders.ts).
 */
import type { Resolvers } from '../../generated/graphql.ts';
import {
  CONTENT_MAX_BYTES,
  DIFF_MAX_BYTES,
  isDiffContext,
  MAX_CONTEXT,
  unifiedDiff,
  type CappedText,
  type DiffSide,
} from '../../history/revision-diff.ts';
import type { RevisionAt } from '../../services/read-manifests.ts';
import type { GraphqlContext } from '../context.ts';
import { REQUEST_DIFF_BUDGET_MS, type RenderedRevision } from '../loaders.ts';
import { badUserInput } from '../errors.ts';

/** Content of a revision as returned, made once per parent so that `content` and `truncated` agree and are charged once. */
const contents = new WeakMap<RevisionAt, Promise<CappedText | null>>();

function contentOf(revision: RevisionAt, ctx: GraphqlContext): Promise<CappedText | null> {
  let content = contents.get(revision);
  if (content === undefined) {
    content = ctx.loaders.revision
      .load(revision.revisionId)
      .then((r) => (r === null ? null : ctx.loaders.textBudget.take(r.yaml, CONTENT_MAX_BYTES)));
    contents.set(revision, content);
  }
  return content;
}

function sideOf(revision: RevisionAt | null, rendered: RenderedRevision | null, missing: string): DiffSide {
  if (revision === null) return { text: null, label: missing };
  if (rendered === null) return { text: null, label: `revision ${revision.revisionId} no longer stored` };
  return { text: rendered.yaml, label: `${rendered.hash.slice(0, 12)}, ${revision.at.toISOString()}` };
}

const part = (key: string, index: number): string => key.split('/')[index] ?? '';

export const revisionResolvers: Pick<Resolvers, 'ObjectChange' | 'ObjectRevision'> = {
  ObjectChange: {
    group: (c) => part(c.key, 0),
    kind: (c) => part(c.key, 1),
    namespace: (c) => part(c.key, 2),
    name: (c) => c.key.split('/').slice(3).join('/'),
    diff: async (c, args, ctx) => {
      const context = args.context ?? 3;
      if (!isDiffContext(context))
        throw badUserInput(`diff: context must be an integer from 0 to ${MAX_CONTEXT}, got ${context}`);
      if (c.withheld) return null;
      const [before, after] = await Promise.all([
        c.before && ctx.loaders.revision.load(c.before.revisionId),
        c.after && ctx.loaders.revision.load(c.after.revisionId),
      ]);
      if ((c.before === null || before === null) && (c.after === null || after === null)) return null;
      const missing = c.change === 'CHANGED' ? 'not observed' : 'not in the manifest';
      const budget = ctx.loaders.textBudget;
      const diff = budget.timed((timeoutMs) =>
        unifiedDiff(sideOf(c.before, before ?? null, missing), sideOf(c.after, after ?? null, missing), context, {
          timeoutMs,
        }),
      );
      if (diff === null)
        return `# diff omitted by phaselog: this request's ${REQUEST_DIFF_BUDGET_MS} ms of diff time are spent\n`;
      return budget.take(diff.text, DIFF_MAX_BYTES).text;
    },
  },
  ObjectRevision: {
    id: (r) => String(r.revisionId),
    hash: async (r, _args, ctx) =>
      r.withheld ? null : ((await ctx.loaders.revision.load(r.revisionId))?.hash ?? null),
    content: async (r, _args, ctx) => (r.withheld ? null : ((await contentOf(r, ctx))?.text ?? null)),
    truncated: async (r, _args, ctx) => (r.withheld ? false : ((await contentOf(r, ctx))?.truncated ?? false)),
  },
};
