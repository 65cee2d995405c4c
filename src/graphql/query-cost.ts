/**
 * What an operation may cost, known before it runs. A field costs 1, or more when it computes over
 * history ({@link FIELD_COSTS}); what a field selects counts once per item the field may return:
 * its page size for a field taking `first` (the largest page it allows when a variable gives it,
 * since the rule cannot see variables), an estimate for other lists ({@link LIST_SIZES}, else the
 * largest page). Nothing lowers a cost: every count is at least 1.
 *
 * Hand-written because no library knows these page sizes: graphql-armor's cost-limit reads only an
 * integer literal `first` (a variable or the schema's default counts as one item) and has no
 * per-field costs. Each fragment is measured once and its cost reused at every spread, so the walk
 * is linear in the document however deeply fragments spread one another.
 */
import { GraphQLError, Kind, getNamedType, getNullableType, isInterfaceType, isListType, isObjectType } from 'graphql';
import type {
  ASTVisitor,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLField,
  GraphQLNamedType,
  GraphQLSchema,
  SelectionSetNode,
  ValidationContext,
  ValidationRule,
} from 'graphql';
import { MAX_PAGE_SIZE, MAX_PHASES_PAGE_SIZE, pageSizeProblem } from './cursor.ts';

/**
 * Fields that cost more than 1 by themselves (before what they select), by schema coordinate:
 * those that read or compute over recorded history, and mutations that queue snapshot work.
 */
export const FIELD_COSTS: Readonly<Record<string, number>> = {
  'Query.auditReport': 5_000,
  'Query.gate': 100,
  'Mutation.refreshCluster': 1_000,
  'Mutation.refreshPhase': 1_000,
  'Phase.statusAt': 10,
  // Plans are derived when read: each resolves its phases (a few statements per plan).
  'Query.plans': 100,
  'Query.plan': 10,
  'Query.planGate': 100,
  // Reads every phase's intervals over the window and merges them.
  'Plan.history': 200,
  'Plan.statusAt': 50,
  'Phase.manifest': 10,
  // Renders two stored objects and diffs them (revision rows load in one batch for the response).
  'ObjectChange.diff': 5,
  'ObjectRevision.content': 2,
  // One Redis read per request batch, parsed and flattened per resource.
  'Resource.children': 2,
  // One round trip to the owning worker per page, which GETs each object from its cluster: a GET
  // per resource is dearer than a read of Redis or the database.
  'Resource.liveStatus': 5,
};

/**
 * How many items a list without `first` is counted as, where the largest page would be far off:
 * a resource's conditions come from the cluster (kstatus conditions, a handful), not the client.
 */
export const LIST_SIZES: Readonly<Record<string, number>> = {
  'Phase.conditions': 10,
  'PhaseSnapshot.conditions': 10,
  // At most MAX_GATE_CONDITIONS (the gate refuses more).
  'GateResult.conditions': 20,
  // At most MAX_PLAN_PHASES (src/history/plans.ts).
  'Plan.phases': 50,
  'Plan.warnings': 10,
  // A resource's owned objects: a worker publishes at most 200 (MAX_CHILD_ITEMS), most Deployments
  // own a ReplicaSet or two and a few Pods; counted as a typical tree, not the bound, so a page of
  // resources with their trees stays within the cost limit.
  'ResourceChildren.items': 25,
  // Values of one applier status field: cli-utils defines at most five (reconcile), Argo CD three.
  'AppliedSummary.strategy': 5,
  'AppliedSummary.actuation': 5,
  'AppliedSummary.reconcile': 5,
  'AppliedSummary.sync': 5,
  // An audit report is computed whole, whatever is selected (its price is Query.auditReport's):
  // its lists are parts of that one answer and read nothing more, so each counts as one item.
  'AuditReport.phases': 1,
  'AuditPhase.manifestChanges': 1,
  'AuditRecovery.incidents': 1,
  'AuditRestore.restores': 1,
};

/**
 * Cost of `__schema` or `__type`, with whatever they select: the answer is bounded by the schema,
 * and graphql-js' MaxIntrospectionDepthRule (one of the specified rules) bounds its nested lists.
 */
export const INTROSPECTION_COST = 1_000;

/** The largest `first` a field allows, by schema coordinate. */
export function maxPageSizeOf(coordinate: string): number {
  return coordinate === 'Query.phases' ? MAX_PHASES_PAGE_SIZE : MAX_PAGE_SIZE;
}

/** A page size the API refuses: BAD_USER_INPUT, as the resolvers would say it, naming the limit as the others do. */
export function pageSizeError(message: string, node?: FieldNode): GraphQLError {
  return new GraphQLError(message, {
    ...(node ? { nodes: node } : {}),
    extensions: { code: 'BAD_USER_INPUT', limit: 'pageSize' },
  });
}

function fieldsOf(type: GraphQLNamedType | undefined) {
  return type && (isObjectType(type) || isInterfaceType(type)) ? type.getFields() : undefined;
}

/** Connections' `edges` are as long as the page their field was asked for, counted there. */
function isConnectionEdges(parent: GraphQLNamedType, name: string): boolean {
  return name === 'edges' && parent.name.endsWith('Connection');
}

function pageSizeOf(field: FieldNode, def: GraphQLField<unknown, unknown>, coordinate: string): number {
  const max = maxPageSizeOf(coordinate);
  const value = field.arguments?.find((a) => a.name.value === 'first')?.value;
  if (value === undefined || value.kind === Kind.NULL) {
    const fallback = def.args.find((a) => a.name === 'first')?.defaultValue;
    return typeof fallback === 'number' && pageSizeProblem(fallback, max) === undefined ? fallback : max;
  }
  if (value.kind === Kind.INT) {
    const size = Number(value.value);
    // A size out of range is refused before costing; were it not, it would still count as the largest.
    return pageSizeProblem(size, max) === undefined ? size : max;
  }
  return max;
}

function itemsOf(field: FieldNode, def: GraphQLField<unknown, unknown> | undefined, parent: GraphQLNamedType): number {
  if (def === undefined) return 1;
  const coordinate = `${parent.name}.${def.name}`;
  if (def.args.some((a) => a.name === 'first')) return pageSizeOf(field, def, coordinate);
  if (!isListType(getNullableType(def.type))) return 1;
  if (isConnectionEdges(parent, def.name)) return 1;
  return LIST_SIZES[coordinate] ?? MAX_PAGE_SIZE;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  /** Cost of each fragment measured so far. */
  measured: Map<string, number>;
  /** Fragments being measured: a spread of one of them is a cycle, refused by NoFragmentCyclesRule. */
  open: Set<string>;
}

function costOfFragment(name: string, walk: Walk): number {
  const known = walk.measured.get(name);
  if (known !== undefined) return known;
  const fragment = walk.fragments.get(name);
  if (fragment === undefined || walk.open.has(name)) return 0;
  walk.open.add(name);
  const cost = costOfSet(
    fragment.selectionSet,
    walk.schema.getType(fragment.typeCondition.name.value) ?? undefined,
    walk,
  );
  walk.open.delete(name);
  walk.measured.set(name, cost);
  return cost;
}

function costOfField(field: FieldNode, parent: GraphQLNamedType | undefined, walk: Walk): number {
  const name = field.name.value;
  if (name === '__schema' || name === '__type') return INTROSPECTION_COST;
  const def = fieldsOf(parent)?.[name];
  const own = (parent && FIELD_COSTS[`${parent.name}.${name}`]) ?? 1;
  if (field.selectionSet === undefined) return own;
  const items = parent ? itemsOf(field, def, parent) : 1;
  return own + items * costOfSet(field.selectionSet, def ? getNamedType(def.type) : undefined, walk);
}

function costOfSet(set: SelectionSetNode, type: GraphQLNamedType | undefined, walk: Walk): number {
  let cost = 0;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) cost += costOfField(selection, type, walk);
    else if (selection.kind === Kind.FRAGMENT_SPREAD) cost += costOfFragment(selection.name.value, walk);
    else
      cost += costOfSet(
        selection.selectionSet,
        selection.typeCondition ? (walk.schema.getType(selection.typeCondition.name.value) ?? undefined) : type,
        walk,
      );
  }
  return cost;
}

/** A validation error (code GRAPHQL_VALIDATION_FAILED, as Apollo gives every one) naming the limit hit. */
export function limitError(message: string, limit: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit } });
}

/**
 * Refuses page sizes given as literals outside what their field allows (BAD_USER_INPUT), then,
 * when every literal is allowed, each operation costing more than `maxCost`.
 */
export function createCostRule(maxCost: number): ValidationRule {
  return (context: ValidationContext): ASTVisitor => {
    let refusedPageSize = false;
    return {
      Field(node) {
        const value = node.arguments?.find((a) => a.name.value === 'first')?.value;
        const parent = context.getParentType();
        if (
          value?.kind !== Kind.INT ||
          parent == null ||
          context.getFieldDef()?.args.some((a) => a.name === 'first') !== true
        )
          return;
        const problem = pageSizeProblem(Number(value.value), maxPageSizeOf(`${parent.name}.${node.name.value}`));
        if (problem === undefined) return;
        refusedPageSize = true;
        context.reportError(pageSizeError(`${node.name.value}: ${problem}`, node));
      },
      Document: {
        leave(document) {
          if (refusedPageSize) return;
          const fragments = new Map<string, FragmentDefinitionNode>();
          for (const def of document.definitions)
            if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
          const schema = context.getSchema();
          const walk: Walk = { schema, fragments, measured: new Map(), open: new Set() };
          for (const def of document.definitions) {
            if (def.kind !== Kind.OPERATION_DEFINITION) continue;
            const root = schema.getRootType(def.operation) ?? undefined;
            const cost = costOfSet(def.selectionSet, root, walk);
            if (cost > maxCost) {
              context.reportError(
                limitError(
                  `the query costs ${cost}; the limit is ${maxCost} (a field with first: N counts what it selects N times)`,
                  'cost',
                ),
              );
            }
          }
        },
      },
    };
  };
}
