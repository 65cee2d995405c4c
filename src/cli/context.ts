/** What every client command gets: the API client, the output stream and the clock. */
import { ConfigError, loadConfig } from '../config.ts';
import type { Config } from '../config.ts';
import { createApiClient } from './api-client.ts';
import type { ApiClient } from './api-client.ts';
import { CliError, EXIT } from './errors.ts';
import { colourWanted, painter } from './format.ts';
import type { Paint } from './format.ts';

export interface CommandContext {
  api: ApiClient;
  /** Whether an API token is configured (else bootstrap commands go to the local database). */
  hasToken: boolean;
  /** The local configuration, for commands that work on this machine's phaselog directly. */
  config: Config;
  out: (text: string) => void;
  /** Progress and diagnostics: stderr, so they never mix with output a pipe reads. */
  err: (text: string) => void;
  /** Whether stderr is a terminal (progress lines redraw in place there). */
  errIsTerminal: boolean;
  /** Colour and status symbols: stdout is a terminal and NO_COLOR is not set. */
  decorated: boolean;
  paint: Paint;
  now: () => Date;
}

/**
 * The GraphQL endpoint for a URL the user gave: a server's base URL (`http://127.0.0.1:4000`, what
 * the UI's address looks like) means its `/graphql`; any other path is taken as given.
 */
export function graphqlEndpoint(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CliError(`"${url}" is not a URL (PHASELOG_URL or --url, e.g. http://127.0.0.1:4000/graphql)`, EXIT.usage);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new CliError(`"${url}" is not an http(s) URL (PHASELOG_URL or --url)`, EXIT.usage);
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/graphql';
  return parsed.href;
}

/** Build the client from --url/--token, then PHASELOG_URL/PHASELOG_TOKEN and phaselog.yaml's `client`. */
export function createCommandContext(flags: { url?: string; token?: string }): CommandContext {
  let config: Config;
  try {
    config = loadConfig(process.env, process.cwd(), { 'client.url': flags.url, 'client.token': flags.token });
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`invalid configuration: ${error.message}`, EXIT.usage);
    throw error;
  }
  const { client } = config;
  const decorated = colourWanted(process.stdout);
  return {
    api: createApiClient({ url: graphqlEndpoint(client.url), ...(client.token ? { token: client.token } : {}) }),
    hasToken: client.token !== undefined,
    config,
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    errIsTerminal: process.stderr.isTTY === true,
    decorated,
    paint: painter(decorated),
    now: () => new Date(),
  };
}
