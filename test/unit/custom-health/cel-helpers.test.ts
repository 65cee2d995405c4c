import { describe, expect, it } from 'vitest';
import { compileCelCheck } from '../../../src/status/custom/cel-check.ts';
import { createFluxCelEnvironment } from '../../../src/status/custom/cel-env.ts';
import { loadObject } from './helpers.ts';

const env = createFluxCelEnvironment();

function evaluateCurrent(expression: string, object: Record<string, unknown>) {
  const { check, errors } = compileCelCheck(
    env,
    { apiVersion: 'x/v1', current: expression },
    'health.healthCheckExprs[0]',
  );
  expect(errors).toEqual([]);
  return check!.evaluate(object);
}

/** Expressions written for phaselog exercising the helpers Flux's CEL environment offers. */
describe('Flux CEL helpers on real-shaped objects', () => {
  it.each([
    [
      'integer fields compare as CEL ints',
      'kafka',
      'status.readyReplicas == spec.kafka.replicas && status.readyReplicas + 0 == 3',
    ],
    ['ints compare with doubles (cross-type numeric comparisons)', 'kafka', 'status.readyReplicas > 2.5'],
    ['optional field access with orValue', 'kafka', "status.?missing.orValue('none') == 'none'"],
    ['list first() returns an optional', 'kafka', "status.conditions.first().value().type == 'Ready'"],
    ['list last() on an empty list is none', 'kafka', '!metadata.?finalizers.orValue([]).last().hasValue()'],
    ['sets.contains', 'certificateWithNulls', "sets.contains(spec.dnsNames, ['shop.example.com'])"],
    [
      'sets.intersects and sets.equivalent',
      'kafka',
      'sets.intersects([1, 2], [2, 3]) && sets.equivalent([1, 2, 2], [2, 1])',
    ],
    ['base64 round trip', 'configMap', "base64.decode(base64.encode(bytes(data.mode))) == bytes('maintenance')"],
    [
      'strings: charAt, replace, upperAscii, split, format',
      'cluster',
      "status.currentPrimary.charAt(0) == 'o' && status.phase.replace(' ', '_', 1) == 'Cluster_in healthy state' && status.currentPrimary.split('-').size() == 3 && '%s has %d'.format([metadata.name, status.instances]) == 'orders-db has 3'",
    ],
    [
      'strings.quote and reverse',
      'configMap',
      "strings.quote(data.mode) == '\"maintenance\"' && 'abc'.reverse() == 'cba'",
    ],
    ['a JSON null field equals null', 'certificateWithNulls', 'status.renewalTime == null'],
  ])('%s', (_name, object, expression) => {
    expect(evaluateCurrent(expression, loadObject(object))).toMatchObject({ status: 'Current' });
  });

  it.each([
    [
      'a non-boolean result',
      'status.readyReplicas',
      "failed to evaluate CEL expression as boolean: 'status.readyReplicas'",
    ],
    [
      'a missing key',
      'status.nope == 1',
      "failed to evaluate the CEL expression 'status.nope == 1': no such key: nope",
    ],
    [
      'an undeclared top-level field',
      'spec2.x.y == 1',
      "failed to evaluate the CEL expression 'spec2.x.y == 1': no such attribute(s): spec2.x.y",
    ],
  ])('%s is Unknown with cel-go wording', (_name, expression, message) => {
    expect(evaluateCurrent(expression, loadObject('kafka'))).toMatchObject({
      status: 'Unknown',
      reason: 'HEALTH_CHECK_ERROR',
      message,
    });
  });

  it('integer generation mismatch is InProgress before any expression runs', () => {
    const kafka = loadObject('kafka');
    const stale = { ...kafka, metadata: { ...(kafka.metadata as object), generation: 4 } };
    expect(evaluateCurrent('true', stale)).toMatchObject({ status: 'InProgress' });
  });
});
