/**
 * graphql-codegen: resolver types from schema.graphql (`npm run codegen`, also run by postinstall).
 * Reads only local files, so it works offline. Mappers say what a resolver of each object type
 * really receives as its parent: the domain records the stores and services return. Object types
 * whose fields are all plain data stay unmapped, so what resolvers return for them is checked field
 * by field. Paths in contextType and mappers are relative to the generated file.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  generates: {
    'src/generated/graphql.ts': {
      plugins: ['typescript', 'typescript-resolvers'],
      config: {
        useTypeImports: true,
        // Relative imports end in .ts in this repo (TS rewriteRelativeImportExtensions).
        emitLegacyCommonJSImports: false,
        importExtension: '.ts',
        contextType: '../graphql/context.ts#GraphqlContext',
        enumsAsTypes: true,
        strictScalars: true,
        scalars: {
          ID: { input: 'string', output: 'string | number' },
          DateTime: { input: 'Date', output: 'Date' },
          // Milliseconds, as scalars.ts parses and formats them.
          Duration: { input: 'number', output: 'number' },
          JSON: { input: 'unknown', output: 'unknown' },
        },
        mapperTypeSuffix: 'Model',
        mappers: {
          Phase: '../store/read-types.ts#PhaseRecord',
          Cluster: '../store/cluster-store.ts#ClusterRecord',
          PhaseSnapshot: '../graphql/resolvers/parents.ts#PhaseSnapshotParent',
          PhaseInterval: '../graphql/resolvers/parents.ts#PhaseIntervalParent',
          Resource: '../store/read-types.ts#ResourceRecord',
          ManifestVersion: '../services/read-manifests.ts#ManifestVersion',
          ObjectChange: '../services/read-manifests.ts#ObjectChange',
          ObjectRevision: '../services/read-manifests.ts#RevisionAt',
          PhaseCondition: '../graphql/resolvers/parents.ts#PhaseConditionParent',
          Plan: '../services/read-plans.ts#PlanRecord',
          PlanStep: '../services/read-plans.ts#PlanStepRecord',
          PlanGateResult: '../services/read-plans.ts#PlanGateOutcome',
        },
      },
    },
  },
};

export default config;
