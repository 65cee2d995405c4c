import { describe, expect, it } from 'vitest';
import { fillUrlTemplate, templateVariables, TemplateError } from '../../../src/checks/url-template.ts';

const phase = (labels: Record<string, string>, name = 'api') => ({
  id: 1,
  cluster: 'prod',
  source: 'cli-utils',
  namespace: 'shop',
  name,
  labels,
});

describe('check URL templates', () => {
  it('fills the phase fields and labels', () => {
    expect(
      fillUrlTemplate(
        'https://{{ labels.app }}.{{ cluster }}.example/{{namespace}}/{{ name }}/{{ source }}',
        phase({ app: 'web' }),
      ),
    ).toBe('https://web.prod.example/shop/api/cli-utils');
  });

  it.each([
    [
      'a slash cannot add a path level',
      'https://svc.example/{{ labels.x }}/healthz',
      { x: 'a/../../admin' },
      'https://svc.example/a%2F..%2F..%2Fadmin/healthz',
    ],
    [
      'a dot segment cannot climb',
      'https://svc.example/base/{{ labels.x }}/healthz',
      { x: '..' },
      'https://svc.example/base/%2E%2E/healthz',
    ],
    [
      'a query or fragment cannot be started',
      'https://svc.example/{{ labels.x }}',
      { x: 'a?admin=1#f' },
      'https://svc.example/a%3Fadmin%3D1%23f',
    ],
    [
      'credentials cannot be injected before the host',
      'https://{{ labels.x }}.svc.example/',
      { x: 'evil.com@' },
      'https://evil.com%40.svc.example/',
    ],
  ])('encodes hostile values: %s', (_what, template, labels, expected) => {
    const url = fillUrlTemplate(template, phase(labels));
    expect(url).toBe(expected);
    if (URL.canParse(url)) expect(new URL(url).pathname.startsWith('/admin')).toBe(false);
  });

  it('gives a TemplateError for a label the phase lacks, and for a key of Object.prototype', () => {
    expect(() => fillUrlTemplate('https://x/{{ labels.app }}', phase({}))).toThrow(TemplateError);
    expect(() => fillUrlTemplate('https://x/{{ labels.toString }}', phase({}))).toThrow(TemplateError);
  });

  it('names the variables, and flags unbalanced braces', () => {
    expect(templateVariables('https://{{ a }}/{{b}}')).toEqual(['a', 'b']);
    expect(templateVariables('https://{{ a }/x')).toBeUndefined();
  });
});
