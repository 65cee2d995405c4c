/**
 * Fault rules: which requests they hit, how many times, and what they do.
 */
import type { FaultRule } from './types.ts';

/** What the request layer needs to know to match a rule. */
export interface FaultTarget {
  verb: string;
  group: string;
  resource: string;
  kind: string;
  namespace: string | undefined;
}

/** The combined decision for one request. */
export interface FaultDecision {
  latencyMs: number;
  /** The first non-latency rule that matched, if any. */
  terminal: FaultRule | undefined;
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
}

function matches(rule: FaultRule, t: FaultTarget): boolean {
  const m = rule.match;
  if (!m) return true;
  if (m.verb !== undefined && m.verb !== t.verb) return false;
  if (m.group !== undefined && m.group !== t.group) return false;
  if (m.resource !== undefined && m.resource !== t.resource) return false;
  if (m.kind !== undefined && m.kind !== t.kind) return false;
  if (m.namespace !== undefined && m.namespace !== (t.namespace ?? '')) return false;
  return true;
}

/** Ordered, counted fault rules. */
export class FaultSet {
  private rules: ActiveRule[] = [];

  /** Adds a rule; returns its remover. Throws on rules that make no sense. */
  add(rule: FaultRule): () => void {
    validateRule(rule);
    const active: ActiveRule = { rule: { ...rule }, remaining: rule.times ?? Number.POSITIVE_INFINITY };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  clear(): void {
    this.rules = [];
  }

  /** The rules still in force, in the order they are tried, with how many hits each has left. */
  list(): { rule: FaultRule; remaining: number }[] {
    return this.rules.map((r) => ({ rule: { ...r.rule }, remaining: r.remaining }));
  }

  /** Consumes matching rules: latency rules add up; the first other rule decides the effect. */
  decide(target: FaultTarget): FaultDecision {
    let latencyMs = 0;
    let terminal: FaultRule | undefined;
    for (const active of this.rules) {
      if (active.remaining <= 0 || !matches(active.rule, target)) continue;
      active.remaining--;
      latencyMs += active.rule.latencyMs ?? 0;
      if (active.rule.effect !== 'latency') {
        terminal = active.rule;
        break;
      }
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return { latencyMs, terminal };
  }
}

/** Error thrown for malformed fault rules (a programming error in the caller). */
export class FaultRuleError extends Error {
  override name = 'FaultRuleError';
}

function validateRule(rule: FaultRule): void {
  const effects = ['reset', 'hang', 'status', 'latency'];
  if (!effects.includes(rule.effect))
    throw new FaultRuleError(`fault effect must be one of ${effects.join(', ')}; got ${String(rule.effect)}`);
  if (
    rule.statusCode !== undefined &&
    (!Number.isInteger(rule.statusCode) || rule.statusCode < 400 || rule.statusCode > 599)
  ) {
    throw new FaultRuleError(`fault statusCode must be an HTTP error code (400-599); got ${rule.statusCode}`);
  }
  if (rule.latencyMs !== undefined && !(rule.latencyMs >= 0))
    throw new FaultRuleError(`fault latencyMs must be >= 0; got ${rule.latencyMs}`);
  if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times > 0))
    throw new FaultRuleError(`fault times must be a positive integer; got ${rule.times}`);
}
