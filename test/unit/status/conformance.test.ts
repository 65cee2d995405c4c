import { describe, expect, it } from 'vitest';
import {
  aggregateStatus,
  augmentConditions,
  computeStatus,
  readIntField,
  readStringField,
} from '../../../src/status/index.ts';
import type { ResourceStatus } from '../../../src/status/index.ts';
import { fillTimes, loadAggregatorCases, loadCases, NOW } from './fixtures.ts';

const cases = loadCases();
const computeCases = cases.filter((c) => c.function === 'Compute');
const augmentCases = cases.filter((c) => c.function === 'Augment');
const intCases = cases.filter((c) => c.function === 'GetIntField');
const stringCases = cases.filter((c) => c.function === 'GetStringField');

describe('kstatus Compute conformance (cli-utils status tests)', () => {
  it('covers every upstream Compute case', () => {
    expect(computeCases).toHaveLength(58);
  });

  it.each(computeCases.map((c) => [c.name, c] as const))(
    '%s gives the upstream status, conditions and message',
    (_name, c) => {
      const result = computeStatus(c.object, { now: NOW });
      expect(result.status).toBe(c.expectedStatus);
      expect(result.message).toBe(c.derivedMessage);
      expect(result.conditions).toEqual(c.derivedConditions);
      for (const expected of c.expectedConditions ?? []) {
        expect(result.conditions).toContainEqual(expect.objectContaining(expected));
      }
      for (const absent of c.absentConditionTypes ?? []) {
        expect(result.conditions.map((x) => x.type)).not.toContain(absent);
      }
    },
  );
});

describe('kstatus Augment conformance', () => {
  it.each(augmentCases.map((c) => [c.name, c] as const))('%s merges conditions like kstatus', (_name, c) => {
    const before = structuredClone(c.object);
    const outcome = augmentConditions(c.object, { now: NOW });
    if (!outcome.ok) throw new Error(outcome.error);
    expect(c.object).toEqual(before);
    if (c.expectedObject !== undefined) {
      expect(outcome.object).toEqual(c.expectedObject);
      return;
    }
    const status = outcome.object['status'] as { conditions: Record<string, string>[] };
    expect(status.conditions).toHaveLength(c.expectedConditionCount ?? -1);
    for (const expected of c.expectedConditions ?? []) {
      const found = status.conditions.find((x) => x['type'] === expected.type);
      expect(found?.['reason']).toBe(expected.reason);
    }
    expect(status.conditions).toEqual(fillTimes(c.derivedConditions));
  });
});

describe('kstatus field helpers', () => {
  it.each(intCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(readIntField(c.object, c.args?.fieldPath ?? '', Number(c.args?.default))).toBe(c.expected);
  });
  it.each(stringCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(readStringField(c.object, c.args?.fieldPath ?? '', String(c.args?.default))).toBe(c.expected);
  });
});

describe('kstatus aggregator conformance', () => {
  it.each(loadAggregatorCases().map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const statuses = c.statuses.map((s) => s.status as ResourceStatus);
    expect(aggregateStatus(statuses, c.desired as ResourceStatus)).toBe(c.expected);
  });
});
