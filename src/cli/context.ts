/** What every client command gets: the API client, the output stream and the clock. */
import { ConfigError, loadConfig } from '../config.ts';
import { createApiClient } from './api-client.ts';
import type { ApiClient } from './api-client.ts';
import { CliError, EXIT } from './errors.ts';

export interface CommandContext {
  api: ApiClient;
  out: (text: string) => void;
  now: () => Date;
}

/** Build the client from --url/--token, then PHASELOG_URL/PHASELOG_TOKEN and phaselog.yaml's `client`. */
export function createCommandContext(flags: { url?: string; token?: string }): CommandContext {
  let client;
  try {
    client = loadConfig(process.env, process.cwd(), { 'client.url': flags.url, 'client.token': flags.token }).client;
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`invalid configuration: ${error.message}`, EXIT.usage);
    throw error;
  }
  return {
    api: createApiClient({ url: client.url, ...(client.token ? { token: client.token } : {}) }),
    out: (text) => void process.stdout.write(text),
    now: () => new Date(),
  };
}
