/** The shape shared by kstatus' built-in rules (cli-utils `core.go`, `GetConditionsFn`). */
import type { ConditionList } from '../conditions.ts';
import type { JsonRecord } from '../read.ts';
import type { StatusResult } from '../types.ts';

/** Inputs a rule may need besides the object. */
export interface RuleContext {
  /** The evaluation time in epoch milliseconds (only the Pod rule reads it). */
  nowMs: number;
}

/**
 * A built-in rule: the object, its already-validated `status.conditions`, and the context. A rule's
 * answer is final (kstatus never falls through to the Ready fallback for a kind with a rule).
 */
export type StatusRule = (obj: JsonRecord, conditions: ConditionList, context: RuleContext) => StatusResult;
