/** Audit report resolvers: one service call each; a token's restrictions narrow the selection. */
import type { QueryResolvers, ReportFormat as ReportFormatEnum } from '../../generated/graphql.ts';
import type { ReportFormat } from '../../services/audit-report.ts';
import { isRowIdText } from '../cursor.ts';
import { badUserInput } from '../errors.ts';

/** The SDL's report formats and the report service's, one for one. */
const FORMATS: Readonly<Record<ReportFormatEnum, ReportFormat>> = {
  JSON: 'json',
  CSV: 'csv',
  MARKDOWN: 'markdown',
  HTML: 'html',
};

/** A stored report's format (the service's name) as the SDL's enum. */
function toFormatEnum(stored: string): ReportFormatEnum {
  const found = (Object.keys(FORMATS) as ReportFormatEnum[]).find((key) => FORMATS[key] === stored);
  if (found === undefined) throw new Error(`stored report format ${JSON.stringify(stored)} is not one the API knows`);
  return found;
}

export const reportResolvers: { Query: Pick<QueryResolvers, 'auditReport' | 'storedReports' | 'storedReport'> } = {
  Query: {
    auditReport: async (_parent, args, ctx) => {
      const now = new Date();
      const to = args.to ?? now;
      if (to <= args.from) throw badUserInput('auditReport: `to` must be after `from`');
      if (args.from > now) throw badUserInput('auditReport: `from` is in the future');
      const format = FORMATS[args.format];
      const rendered = await ctx.read.reports.create({
        from: args.from,
        to,
        now,
        format,
        selection: {
          clusters: args.filter?.clusters ?? [],
          namespaces: args.filter?.namespaces ?? [],
          phases: args.filter?.phases ?? [],
        },
        access: ctx.principal.access,
      });
      const { report } = rendered;
      return {
        format: args.format,
        contentType: rendered.contentType,
        content: rendered.content,
        figures: JSON.parse(JSON.stringify(report)) as unknown,
        // The typed fields are the report's own objects: their names are the SDL's.
        totals: report.totals,
        phases: report.phases,
      };
    },
    storedReports: async (_parent, args, ctx) => {
      if (args.first < 1 || args.first > 100) throw badUserInput('first must be between 1 and 100');
      const list = await ctx.read.reports.stored.list(args.first);
      // Content is fetched one report at a time (storedReport); the list only says what exists.
      return list.map((r) => ({ ...r, format: toFormatEnum(r.format), content: '' }));
    },
    storedReport: async (_parent, args, ctx) => {
      if (!isRowIdText(args.id)) throw badUserInput(`${JSON.stringify(args.id)} is not a report id`);
      const id = Number(args.id);
      const report = await ctx.read.reports.stored.get(id);
      return report ? { ...report, format: toFormatEnum(report.format) } : null;
    },
  },
};
