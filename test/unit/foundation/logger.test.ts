/**
 * Log lines: JSON for machines (pipes, files, containers), pino-pretty's text on a terminal or when
 * asked for, and secrets censored in both.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.ts';
import { createLogger, resolveLogFormat, type LogFormat } from '../../../src/runtime/logger.ts';

/** A destination that keeps what is written. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

const SECRET = 'plg_0123456789abcdef-secret';

/** Logs one line naming a secret in the places secrets turn up, and returns what was written. */
function logWithSecrets(format: LogFormat): string {
  const out = capture();
  const log = createLogger('info', { format, destination: out.stream }).child({ part: 'graphql' });
  log.info(
    {
      token: SECRET,
      headers: { authorization: `Bearer ${SECRET}` },
      cluster: { name: 'prod', token: SECRET },
      tokenName: 'ci',
    },
    'token used',
  );
  log.flush();
  return out.text();
}

describe('resolveLogFormat', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['auto', undefined, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('%s with a TTY %s writes %s', (setting, isTTY, expected) => {
    expect(resolveLogFormat(setting, isTTY === undefined ? {} : { isTTY })).toBe(expected);
  });
});

describe('createLogger', () => {
  it('writes one JSON object per line, with the secrets censored', () => {
    const text = logWithSecrets('json');
    expect(text).not.toContain(SECRET);
    const line = JSON.parse(text.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'token used',
      level: 30,
      part: 'graphql',
      service: 'phaselog',
      tokenName: 'ci',
      token: '[redacted]',
      headers: { authorization: '[redacted]' },
      cluster: { name: 'prod', token: '[redacted]' },
    });
  });

  it('writes text a person reads in the pretty format, with the same secrets censored', () => {
    const text = logWithSecrets('pretty');
    expect(text).not.toContain(SECRET);
    expect(() => JSON.parse(text.trim())).toThrow();
    // A local clock time, the level, the component, the message and the fields on one line.
    expect(text).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: \[graphql\] token used \{.*\}\n$/);
    expect(text).toContain('"token":"[redacted]"');
    expect(text).toContain('"headers":{"authorization":"[redacted]"}');
    expect(text).toContain('"tokenName":"ci"');
    // No ANSI colour codes into a stream that is not a terminal.
    expect(text).not.toContain('\u001b[');
  });

  it('prints errors with their stack in the pretty format', () => {
    const out = capture();
    createLogger('info', { format: 'pretty', destination: out.stream }).error(
      { err: new Error('connection refused') },
      'cannot reach Redis',
    );
    expect(out.text()).toContain('cannot reach Redis');
    expect(out.text()).toMatch(/Error: connection refused\n\s+at /);
  });
});

describe('log.format setting', () => {
  it('defaults to auto and takes PHASELOG_LOG_FORMAT', () => {
    expect(loadConfig({}, '/nonexistent-dir').log.format).toBe('auto');
    expect(loadConfig({ PHASELOG_LOG_FORMAT: 'json' }, '/nonexistent-dir').log.format).toBe('json');
    expect(loadConfig({ PHASELOG_LOG_FORMAT: 'pretty' }, '/nonexistent-dir').log.format).toBe('pretty');
  });

  it('refuses a format it does not know, naming the variable', () => {
    let issues: { key: string; message: string }[] = [];
    try {
      loadConfig({ PHASELOG_LOG_FORMAT: 'text' }, '/nonexistent-dir');
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      issues = error.issues;
    }
    expect(issues).toEqual([{ key: 'PHASELOG_LOG_FORMAT (log.format)', message: expect.stringContaining('pretty') }]);
  });
});
