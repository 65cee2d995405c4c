import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileCelCheck } from '../../../src/status/custom/cel-check.ts';
import { createFluxCelEnvironment } from '../../../src/status/custom/cel-env.ts';

interface FluxCelCase {
  name: string;
  exprs: { current?: string; inProgress?: string; failed?: string };
  object: Record<string, unknown>;
  expectedStatus?: string;
  expectedErrorContains?: string;
  expectedMessage: string | null;
}

const cases = JSON.parse(
  readFileSync(new URL('../../fixtures/health/flux-cel-cases.json', import.meta.url), 'utf8'),
) as FluxCelCase[];
const env = createFluxCelEnvironment();

function evaluateCase(c: FluxCelCase) {
  const { check, errors } = compileCelCheck(
    env,
    {
      apiVersion: 'example.com/v1',
      current: c.exprs.current ?? '',
      inProgress: c.exprs.inProgress,
      failed: c.exprs.failed,
    },
    'healthCheckExprs[0]',
  );
  expect(errors).toEqual([]);
  return check!.evaluate(c.object);
}

describe('Flux CEL conformance (fluxcd/pkg status_evaluator_test.go)', () => {
  it('has the whole fixture', () => {
    expect(cases.length).toBeGreaterThanOrEqual(18);
  });

  it.each(cases.filter((c) => c.expectedStatus !== undefined).map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const result = evaluateCase(c);
    expect(result.status).toBe(c.expectedStatus);
    expect(result.message).toBe(c.expectedMessage ?? '');
    expect(result.customHealth?.engine).toBe('cel');
  });

  it.each(cases.filter((c) => c.expectedErrorContains !== undefined).map((c) => [c.name, c] as const))(
    '%s (Unknown with the error)',
    (_name, c) => {
      const result = evaluateCase(c);
      expect(result.status).toBe('Unknown');
      expect(result.reason).toBe('HEALTH_CHECK_ERROR');
      expect(result.message).toContain(c.expectedErrorContains);
    },
  );
});
