/**
 * `notifications` in phaselog.yaml: a bad route is refused when the configuration loads, by key,
 * with what is wrong, and never with a receiver URL or a secret file's contents in the message.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { dirWith, issuesOf } from '../../helpers/config.ts';

const SLACK_URL = 'https://hooks.slack.example/services/T000/B000/very-secret-token';

const route = (receiver: string, extra = '') =>
  `notifications:\n  routes:\n    - name: ops\n${extra}      receiver:\n${receiver}`;

describe('notifications configuration', () => {
  it('reads a route with its defaults: phase changes, at once, 8 attempts from 1s', () => {
    const dir = dirWith(
      route('        type: webhook\n        url: https://hooks.example.com/x\n        secretFile: hmac\n'),
      { hmac: 's3cret\n' },
    );
    const { notifications } = loadConfig({}, dir);
    expect(notifications.scanInterval).toBe(1000);
    expect(notifications.routes[0]).toMatchObject({
      name: 'ops',
      minDuration: 0,
      match: { changes: ['phase'] },
      retry: { attempts: 8, backoff: 1000 },
      receiver: { type: 'webhook', timeout: 10_000 },
    });
  });

  it('has no routes by default', () => {
    expect(loadConfig({}, dirWith('log:\n  level: info\n')).notifications.routes).toEqual([]);
  });

  it.each([
    [
      'an unknown receiver type',
      route('        type: pager\n        url: https://x.example.com\n'),
      'notifications.routes.0.receiver.type',
      /webhook, slack or cloudevents/,
    ],
    [
      'a URL that is not http(s)',
      route('        type: slack\n        url: file:///etc/passwd\n'),
      'notifications.routes.0.receiver.url',
      /http:\/\/ or https:\/\//,
    ],
    [
      'a URL that is not a URL',
      route('        type: slack\n        url: hooks\n'),
      'notifications.routes.0.receiver.url',
      /not a URL/,
    ],
    [
      'neither url nor urlFile',
      route('        type: slack\n'),
      'notifications.routes.0.receiver',
      /exactly one of url and urlFile/,
    ],
    [
      'a negative minDuration',
      route('        type: slack\n        url: https://x.example.com\n', '      minDuration: -5s\n'),
      'notifications.routes.0.minDuration',
      /zero or more/,
    ],
    [
      'a negative minDuration in ms',
      route('        type: slack\n        url: https://x.example.com\n', '      minDuration: -500\n'),
      'notifications.routes.0.minDuration',
      /zero or more/,
    ],
    [
      'a webhook without a secret',
      route('        type: webhook\n        url: https://x.example.com\n'),
      'notifications.routes.0.receiver.secretFile',
      /./,
    ],
    [
      'a missing secret file',
      route('        type: webhook\n        url: https://x.example.com\n        secretFile: nowhere/hmac\n'),
      'notifications.routes.0.receiver.secretFile',
      /cannot read .*nowhere\/hmac: ENOENT/,
    ],
    [
      'an unknown change kind',
      route('        type: slack\n        url: https://x.example.com\n', '      match:\n        changes: [pod]\n'),
      'notifications.routes.0.match.changes.0',
      /phase/,
    ],
    [
      'a flapping limit of zero',
      route(
        '        type: slack\n        url: https://x.example.com\n',
        '      flapping:\n        maxChanges: 0\n        window: 10m\n',
      ),
      'notifications.routes.0.flapping.maxChanges',
      /./,
    ],
    [
      'an unknown key',
      route('        type: slack\n        url: https://x.example.com\n', '      minDurations: 5s\n'),
      'notifications.routes.0.minDurations',
      /unknown key/,
    ],
  ])('refuses %s, naming the key', (_what, yaml, key, message) => {
    const issues = issuesOf(() => loadConfig({}, dirWith(yaml)));
    expect(issues.map((i) => i.key)).toContain(key);
    expect(issues.find((i) => i.key === key)?.message).toMatch(message);
  });

  it('refuses two routes of one name', () => {
    const yaml =
      'notifications:\n  routes:\n' +
      ['a', 'a']
        .map((n) => `    - name: ${n}\n      receiver:\n        type: slack\n        url: https://x.example.com\n`)
        .join('');
    expect(issuesOf(() => loadConfig({}, dirWith(yaml)))).toEqual([
      { key: 'notifications.routes.1.name', message: 'route "a" is named twice' },
    ]);
  });

  it('checks a URL read from urlFile without repeating it, and never repeats a secret', () => {
    const bad = issuesOf(() =>
      loadConfig(
        {},
        dirWith(route('        type: slack\n        urlFile: slack-url\n'), {
          'slack-url': SLACK_URL.replace('https', 'ftp'),
        }),
      ),
    );
    expect(bad).toEqual([
      {
        key: 'notifications.routes.0.receiver.urlFile',
        message: 'the URL in slack-url must be http:// or https:// (got ftp:)',
      },
    ]);
    const empty = issuesOf(() =>
      loadConfig(
        {},
        dirWith(route('        type: webhook\n        urlFile: slack-url\n        secretFile: hmac\n'), {
          'slack-url': SLACK_URL,
          hmac: '\n',
        }),
      ),
    );
    expect(empty.map((i) => i.key)).toEqual(['notifications.routes.0.receiver.secretFile']);
    expect(JSON.stringify(empty)).not.toContain('very-secret-token');
    const good = loadConfig(
      {},
      dirWith(route('        type: slack\n        urlFile: slack-url\n'), { 'slack-url': `${SLACK_URL}\n` }),
    );
    // The configuration names the file; only the worker reads the URL, into memory.
    expect(JSON.stringify(good)).not.toContain('very-secret-token');
  });

  it('does not repeat a bad inline URL (a Slack URL is a credential)', () => {
    const issues = issuesOf(() =>
      loadConfig({}, dirWith(route(`        type: slack\n        url: ${SLACK_URL.replace('https', 'gopher')}\n`))),
    );
    expect(JSON.stringify(issues)).not.toContain('very-secret-token');
  });
});
