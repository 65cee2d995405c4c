import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'phaselog-checks-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(yaml: string) {
  writeFileSync(path.join(dir, 'phaselog.yaml'), yaml);
  return loadConfig({}, dir);
}

function issuesOf(yaml: string): { key: string; message: string }[] {
  try {
    load(yaml);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('checks in phaselog.yaml', () => {
  it('loads an http, a cel and a webhook check with their defaults', () => {
    const config = load(`checks:
  - name: health
    select: { namespaces: [shop], labels: { tier: web } }
    http: { url: "https://{{ labels.app }}.{{ cluster }}.example/healthz" }
  - name: version
    cel: { expr: "objects.all(o, true)" }
  - name: promoted
    interval: 1m
    webhook: { url: "https://deploy.example/conditions", secretFrom: { env: PROMOTION_HMAC } }
`);
    expect(config.checks.map((c) => [c.name, c.interval, c.timeout])).toEqual([
      ['health', 30_000, 5_000],
      ['version', 30_000, 5_000],
      ['promoted', 60_000, 5_000],
    ]);
    expect(config.checks[0]?.http).toMatchObject({
      method: 'GET',
      expectStatus: [200],
      maxBodyBytes: 65_536,
      headersFrom: [],
    });
  });

  it.each([
    [
      'an unknown template variable',
      'checks:\n  - name: a\n    http: { url: "https://{{ token }}.example/" }\n',
      'checks.0.http.url',
      /unknown template variable "token"/,
    ],
    [
      'a URL that is not http(s)',
      'checks:\n  - name: a\n    http: { url: "file:///etc/passwd" }\n',
      'checks.0.http.url',
      /http:\/\/ or https:\/\//,
    ],
    [
      'two kinds in one check',
      'checks:\n  - name: a\n    http: { url: "https://x/" }\n    cel: { expr: "true" }\n',
      'checks.0',
      /exactly one of http, cel or webhook/,
    ],
    [
      'a derived condition name',
      'checks:\n  - name: Ready\n    http: { url: "https://x/" }\n',
      'checks.0.name',
      /derived conditions/,
    ],
    [
      'two checks of one name',
      'checks:\n  - name: a\n    http: { url: "https://x/" }\n  - name: a\n    http: { url: "https://y/" }\n',
      'checks.1.name',
      /another check is named a/,
    ],
    [
      'a header value written in the file',
      'checks:\n  - name: a\n    http: { url: "https://x/", headersFrom: [{ name: Authorization, value: "Bearer x" }] }\n',
      'checks.0.http.headersFrom.0',
      /.+/,
    ],
    [
      'a CEL expression that does not parse',
      'checks:\n  - name: a\n    cel: { expr: "objects.all(" }\n',
      'checks.0.cel.expr',
      /failed to parse/,
    ],
  ])('refuses %s, naming the key', (_what, yaml, key, message) => {
    const issues = issuesOf(yaml);
    expect(
      issues.some((i) => i.key.startsWith(key) && message.test(i.message)),
      JSON.stringify(issues),
    ).toBe(true);
  });
});
