/**
 * A `cel` check: one CEL expression over the phase and its members' current objects, evaluated
 * with the same environment as the CEL health checks (src/status/custom/cel-env.ts: Flux's
 * dialect, no I/O, no loops beyond CEL's bounded macros). true is True, false is False; an error,
 * a non-boolean result or an object that could not be read is Unknown with a reason, never a throw.
 */
import type { Environment, ParseResult } from '@marcbachmann/cel-js';
import { createFluxCelEnvironment } from '../status/custom/cel-env.ts';
import type { CheckVerdict } from './http-check.ts';

/** What the expression sees: `phase` and `objects`. */
export interface CelActivation {
  phase: {
    cluster: string;
    source: string;
    namespace: string;
    name: string;
    labels: Record<string, string>;
    status: string | null;
  };
  /** Each member's redacted object (metadata and spec; never status or Secret data) plus `phaselog: {key, status, message}`. */
  objects: Record<string, unknown>[];
}

/** A compiled cel check. */
export interface CelCondition {
  evaluate(activation: CelActivation): CheckVerdict;
}

let shared: Environment | undefined;

/** Compiles `expr`; throws with the parser's summary when it does not parse (a config error at load). */
export function compileCelCondition(expr: string): CelCondition {
  shared ??= createFluxCelEnvironment();
  const env = shared;
  let program: ParseResult;
  try {
    program = env.parse(expr);
  } catch (error) {
    throw new Error(
      `failed to parse the CEL expression: ${(error as { summary?: string }).summary ?? (error as Error).message}`,
    );
  }
  return {
    evaluate(activation) {
      let value: unknown;
      try {
        value = program(toCel(activation) as Record<string, unknown>);
      } catch (error) {
        const summary = (error as { summary?: string }).summary ?? (error as Error).message.split('\n')[0] ?? '';
        return { status: 'Unknown', reason: 'EvaluationError', message: summary.slice(0, 500) };
      }
      if (value === true) return { status: 'True', reason: 'ExpressionTrue', message: '' };
      if (value === false) return { status: 'False', reason: 'ExpressionFalse', message: '' };
      return { status: 'Unknown', reason: 'NotBoolean', message: `the expression gave ${typeof value}, not a bool` };
    },
  };
}

/** Integers as CEL ints (BigInt), as the health checks pass objects. */
function toCel(value: unknown): unknown {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(toCel);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = toCel(v);
  return out;
}
