import type { ASTNode, Environment, ParseResult } from '@marcbachmann/cel-js';
import type { StatusResult } from '../types.ts';
import type { CelHealthCheckConfig } from './config.ts';
import { buildCustomResult, buildErrorResult } from './result.ts';

/** Which Flux expression decided, in Flux's evaluation order. */
export type CelHealth = 'inProgress' | 'failed' | 'current';

const CEL_ORDER: readonly { field: CelHealth; status: 'InProgress' | 'Failed' | 'Current' }[] = [
  { field: 'inProgress', status: 'InProgress' },
  { field: 'failed', status: 'Failed' },
  { field: 'current', status: 'Current' },
];

interface CompiledExpression {
  text: string;
  program: ParseResult;
  /** Child -> parent links, to name the attribute path in "no such attribute(s)" errors. */
  parents: WeakMap<object, MutableNode>;
}

/** A Flux CEL health check compiled once, evaluated many times. */
export interface CelCheck {
  source: string;
  evaluate(object: Record<string, unknown>): StatusResult;
}

/** A CEL expression that failed to parse, reported at load time. */
export interface CelCompileError {
  path: string;
  message: string;
}

interface MutableNode {
  op: string;
  args: unknown;
  evaluate?: (ev: CelEvaluator, node: MutableNode, ctx: unknown) => unknown;
}

interface CelEvaluator {
  tryEval(node: unknown, ctx: unknown): unknown;
}

function isNode(value: unknown): value is MutableNode {
  return typeof value === 'object' && value !== null && 'op' in value && 'args' in value;
}

function listChildren(node: MutableNode): MutableNode[] {
  const out: MutableNode[] = [];
  const visit = (value: unknown): void => {
    if (isNode(value)) out.push(value);
    else if (Array.isArray(value)) value.forEach(visit);
  };
  visit(node.args);
  return out;
}

/**
 * cel-go treats `&&`/`||` as commutative over errors but reports the LEFT error when both sides
 * fail; cel-js reports the right one. Flux users see cel-go's message, so logical nodes are
 * re-wired to evaluate both sides and pick errors in cel-go's order.
 */
function rewireLogical(node: MutableNode): void {
  const absorbing = node.op === '&&' ? false : true;
  const [left, right] = node.args as [MutableNode, MutableNode];
  node.evaluate = (ev, _node, ctx) => {
    const l = ev.tryEval(left, ctx);
    if (l === absorbing) return absorbing;
    const r = ev.tryEval(right, ctx);
    if (r === absorbing) return absorbing;
    if (typeof l === 'boolean' && typeof r === 'boolean') return !absorbing;
    if (l instanceof Error) throw l;
    if (r instanceof Error) throw r;
    throw new Error(`no such overload: ${node.op} on non-bool operands`);
  };
}

function prepareTree(root: ASTNode): WeakMap<object, MutableNode> {
  const parents = new WeakMap<object, MutableNode>();
  const stack: MutableNode[] = [root as unknown as MutableNode];
  while (stack.length > 0) {
    const node = stack.pop() as MutableNode;
    if (node.op === '&&' || node.op === '||') rewireLogical(node);
    for (const child of listChildren(node)) {
      parents.set(child, node);
      stack.push(child);
    }
  }
  return parents;
}

/** Names `status.conditions` for an unknown top-level variable, as cel-go's attribute errors do. */
function describeAttribute(node: MutableNode, parents: WeakMap<object, MutableNode>): string {
  let path = String(node.args);
  let current = node;
  for (let parent = parents.get(current); parent; parent = parents.get(current)) {
    const args = parent.args as unknown[];
    if ((parent.op !== '.' && parent.op !== '.?') || args[0] !== current) break;
    path += `.${String(args[1])}`;
    current = parent;
  }
  return path;
}

/** Rewrites cel-js error text into cel-go's wording, which Flux prints. */
function describeCelError(error: unknown, expression: CompiledExpression): string {
  if (!(error instanceof Error)) return String(error);
  const { code, node } = error as Error & { code?: string; node?: unknown };
  if (code === 'unknown_variable' && isNode(node)) {
    return `no such attribute(s): ${describeAttribute(node, expression.parents)}`;
  }
  const summary = (error as Error & { summary?: string }).summary ?? error.message.split('\n')[0] ?? '';
  if (code === 'no_such_key') return summary.replace(/^No such key/, 'no such key');
  return summary;
}

/**
 * Integers become BigInt (CEL `int`); everything else keeps its JSON shape. A cycle (impossible in
 * JSON, possible in hand-built input) becomes null instead of recursing forever.
 */
function toCelValue(value: unknown, ancestors: Set<object> = new Set()): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (ancestors.has(value)) return null;
  ancestors.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((item) => toCelValue(item, ancestors));
  else {
    const record: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) record[key] = toCelValue(item, ancestors);
    out = record;
  }
  ancestors.delete(value);
  return out;
}

function readInteger(object: Record<string, unknown>, parent: string, field: string): number | undefined {
  const holder = object[parent];
  if (holder === null || typeof holder !== 'object') return undefined;
  const value = (holder as Record<string, unknown>)[field];
  return typeof value === 'number' && Number.isInteger(value) ? value : undefined;
}

function compileExpression(env: Environment, text: string): CompiledExpression {
  const program = env.parse(text);
  return { text, program, parents: prepareTree(program.ast) };
}

/**
 * Compiles one Flux CEL health check. Returns the parse errors (with their config path) instead of
 * a check when any expression does not parse, as Flux rejects the whole entry up front.
 */
export function compileCelCheck(
  env: Environment,
  config: CelHealthCheckConfig,
  source: string,
): { check?: CelCheck; errors: CelCompileError[] } {
  const compiled: Partial<Record<CelHealth, CompiledExpression>> = {};
  const errors: CelCompileError[] = [];
  for (const { field } of CEL_ORDER) {
    const text = config[field];
    if (text === undefined || text === '') continue;
    try {
      compiled[field] = compileExpression(env, text);
    } catch (error) {
      const summary = (error as { summary?: string }).summary ?? String(error);
      errors.push({ path: `${source}.${field}`, message: `failed to parse the CEL expression '${text}': ${summary}` });
    }
  }
  if (errors.length > 0) return { errors };
  const evaluate = (object: Record<string, unknown>): StatusResult => {
    try {
      return evaluateCel(compiled, source, object);
    } catch (error) {
      // Only exotic input (throwing getters, proxies) gets here; the checker never throws.
      return buildErrorResult('cel', source, `could not evaluate the CEL health check: ${(error as Error).message}`);
    }
  };
  return { check: { source, evaluate }, errors };
}

/**
 * Flux's status evaluator (fluxcd/pkg `runtime/cel/status_evaluator.go`, RFC 0009): integer
 * `status.observedGeneration` differing from integer `metadata.generation` is InProgress; then
 * inProgress, failed, current are tried in that order and the first true one decides; none true is
 * InProgress. An evaluation error or non-boolean result is Unknown (HEALTH_CHECK_ERROR) carrying
 * cel-go's message. Flux results carry no message, so neither do these.
 */
function evaluateCel(
  compiled: Partial<Record<CelHealth, CompiledExpression>>,
  source: string,
  object: Record<string, unknown>,
): StatusResult {
  const observed = readInteger(object, 'status', 'observedGeneration');
  const generation = readInteger(object, 'metadata', 'generation');
  if (observed !== undefined && generation !== undefined && observed !== generation) {
    return buildCustomResult('InProgress', 'ObservedGenerationMismatch', {
      engine: 'cel',
      source,
      health: 'inProgress',
      message: '',
    });
  }
  const context = toCelValue(object) as Record<string, unknown>;
  for (const { field, status } of CEL_ORDER) {
    const expression = compiled[field];
    if (!expression) continue;
    let value: unknown;
    try {
      value = expression.program(context);
    } catch (error) {
      const message = `failed to evaluate the CEL expression '${expression.text}': ${describeCelError(error, expression)}`;
      return buildErrorResult('cel', source, message);
    }
    if (typeof value !== 'boolean') {
      return buildErrorResult('cel', source, `failed to evaluate CEL expression as boolean: '${expression.text}'`);
    }
    if (value) return buildCustomResult(status, undefined, { engine: 'cel', source, health: field, message: '' });
  }
  return buildCustomResult('InProgress', undefined, { engine: 'cel', source, health: 'inProgress', message: '' });
}
