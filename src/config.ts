/**
 * phaselog's configuration: the only reader of `process.env`. Values come from, in increasing
 * precedence, built-in defaults, an optional `phaselog.yaml`, and environment variables. The result
 * is validated once; every problem is reported by key, and the process exits with code 2.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { clustersConfigSchema, SERVICE_ACCOUNT_DIR } from './kube/config.ts';
import { healthConfigSchema } from './status/custom/config.ts';
import { reportsConfigSchema } from './queue/report-jobs.ts';
import { retentionPolicySchema } from './store/retention.ts';
import { phasesConfigSchema } from './declared-phases.ts';
import { declaredPlansSchema } from './declared-plans.ts';
import { checksConfigSchema, type SecretSource } from './checks/config.ts';
import { parseDuration } from './duration.ts';
import { normalizeOrigin } from './http/origin.ts';
import { notificationsConfigSchema } from './notify/config.ts';
import { receiverFileIssues } from './notify/receiver-files.ts';

/** Which parts of phaselog a process runs. */
export type Role = 'all' | 'api' | 'worker';

/**
 * Environment variables phaselog reads, and the config key each one sets. This table is the
 * contract with deployment files (docker-compose.yml, Helm values): a test checks them against it.
 */
export const ENV_KEYS = {
  DATABASE_URL: 'database.url',
  PHASELOG_DATABASE_READ_URL: 'database.readUrl',
  PHASELOG_DATABASE_POOL_SIZE: 'database.poolSize',
  REDIS_URL: 'redis.url',
  PHASELOG_REDIS_PREFIX: 'redis.prefix',
  PHASELOG_CONFIG: '(path of phaselog.yaml)',
  PHASELOG_ROLE: 'role',
  PHASELOG_HOST: 'server.host',
  PHASELOG_PORT: 'server.port',
  PHASELOG_PROBE_PORT: 'server.probePort',
  PHASELOG_STATE_DIR: 'stateDir',
  PHASELOG_LOG_LEVEL: 'log.level',
  PHASELOG_LOG_FORMAT: 'log.format',
  PHASELOG_SNAPSHOT_INTERVAL: 'snapshot.interval',
  PHASELOG_SNAPSHOT_LIVE: 'snapshot.live',
  PHASELOG_DEMO: 'demo.enabled',
  KUBECONFIG: 'kube.kubeconfig',
  KUBERNETES_SERVICE_HOST: 'kube.serviceHost',
  KUBERNETES_SERVICE_PORT: 'kube.servicePort',
  PHASELOG_CLUSTER_NAME: 'kube.inClusterName',
  PHASELOG_SERVICE_ACCOUNT_DIR: 'kube.serviceAccountDir',
  // Lower case first: a later name wins, and kubectl prefers the upper-case one when both are set.
  https_proxy: 'kube.httpsProxy',
  HTTPS_PROXY: 'kube.httpsProxy',
  http_proxy: 'kube.httpProxy',
  HTTP_PROXY: 'kube.httpProxy',
  no_proxy: 'kube.noProxy',
  NO_PROXY: 'kube.noProxy',
  PHASELOG_URL: 'client.url',
  PHASELOG_TOKEN: 'client.token',
  PHASELOG_ANONYMOUS_READ: 'api.anonymousRead',
  PHASELOG_ALLOWED_ORIGINS: 'api.allowedOrigins',
  PHASELOG_ALLOWED_HOSTS: 'api.allowedHosts',
  PHASELOG_METRICS_TOKEN: 'metrics.token',
  PHASELOG_WORKER_ID: 'worker.id',
} as const;

const durationSchema = z.union([z.number().int().positive(), z.string()]).transform((value, ctx) => {
  const ms = typeof value === 'number' ? value : parseDuration(value);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a duration (use e.g. 500ms, 30s, 5m, 1h)` });
    return z.NEVER;
  }
  return ms;
});

const portSchema = z.coerce.number().int().min(0).max(65535);
const postgresUrl = z.string().refine((v) => /^postgres(ql)?:\/\/[^\s]+$/.test(v) && URL.canParse(v), {
  message: 'must be a postgres:// or postgresql:// URL',
});
const redisUrl = z.string().refine((v) => /^rediss?:\/\/[^\s]*$/.test(v) && URL.canParse(v), {
  message: 'must be a redis:// or rediss:// URL',
});
/**
 * A list of strings, from YAML or as a comma-separated environment value. Entries are checked as a
 * whole list, so a bad entry is reported under the list's key (and its environment variable).
 */
const listOf = (isValid: (entry: string) => boolean, what: string) =>
  z.preprocess(
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : v,
    z.array(z.string()).superRefine((entries, ctx) => {
      for (const entry of entries) if (!isValid(entry)) ctx.addIssue({ code: 'custom', message: `"${entry}" ${what}` });
    }),
  );
const originList = listOf(
  (v) => normalizeOrigin(v) !== undefined,
  'is not an origin such as https://dash.example.com (scheme, host, optional port; no path)',
);
const hostNameList = listOf(
  (v) => /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)$/.test(v),
  'is not a host name or address without port',
);
const booleanString = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0'])])
  .transform((v) => v === true || v === 'true' || v === '1');

/** The whole configuration, as `phaselog.yaml` spells it. */
export const configSchema = z.strictObject({
  role: z.enum(['all', 'api', 'worker']).default('all'),
  stateDir: z.string().min(1).default('.phaselog'),
  server: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: portSchema.default(4000),
      /**
       * Port of `/healthz` and `/readyz` in a worker-only process (role `worker`), which serves no
       * API; unset, such a process serves no HTTP at all. Other roles answer probes on `port`.
       */
      probePort: portSchema.optional(),
    })
    .default({ host: '127.0.0.1', port: 4000 }),
  database: z
    .strictObject({
      url: postgresUrl.optional(),
      /**
       * A read replica (or any server that follows `url`) for the API's queries. Mutations,
       * subscriptions, token checks and workers stay on `url`. Unset: everything uses `url`.
       */
      readUrl: postgresUrl.optional(),
      /**
       * Most connections this process opens to the database (and, with `readUrl`, to the read
       * database), which sizes PostgreSQL's `max_connections` over all processes. @default 10
       */
      poolSize: z.coerce.number().int().min(2, 'at least 2').max(1000).default(10),
    })
    .refine((d) => d.readUrl === undefined || d.url !== undefined, {
      message: 'needs database.url (DATABASE_URL): the embedded PostgreSQL has no replica to read from',
      path: ['readUrl'],
    })
    .default({ poolSize: 10 }),
  /** This process as a snapshot worker: clusters are sharded over the live workers (src/queue/ownership.ts). */
  worker: z
    .strictObject({
      /** Its id among the workers; give each replica a stable one (its pod name). @default `<host>-<pid>` */
      id: z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,200}$/, '1 to 200 letters, digits, ".", "_" or "-"')
        .optional(),
      /** How often it renews its membership and cluster leases. @default 2s */
      heartbeat: durationSchema.default(2_000),
      /** How long a lease lasts: a killed worker's clusters are taken over after about this long. @default 10s */
      lease: durationSchema.default(10_000),
    })
    .refine((w) => w.lease >= 3 * w.heartbeat, {
      message: 'worker.lease must be at least 3 worker.heartbeat, so a live worker renews its leases in time',
      path: ['lease'],
    })
    .default({ heartbeat: 2_000, lease: 10_000 }),
  redis: z
    .strictObject({
      url: redisUrl.optional(),
      /** Prefix of every Redis key and channel phaselog uses, so several installations can share a Redis. @default phaselog */
      prefix: z
        .string()
        .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" or "-"')
        .default('phaselog'),
    })
    .default({ prefix: 'phaselog' }),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /** `json` lines, `pretty` text (pino-pretty), or `auto`: pretty when stdout is a terminal. @default auto */
      format: z.enum(['auto', 'json', 'pretty']).default('auto'),
    })
    .default({ level: 'info', format: 'auto' }),
  snapshot: z
    .strictObject({
      interval: durationSchema.default(30_000),
      jitter: durationSchema.optional(),
      /**
       * Watch the clusters and snapshot within a second of a change, besides the scheduled ticks.
       * Off for API servers or RBAC setups that forbid watches.
       */
      live: booleanString.default(true),
      /** Changes seen by watches within this window become one snapshot. */
      liveDebounce: durationSchema.default(25),
      /**
       * Keep each cluster's current state in the worker between snapshots (heap in proportion to
       * its resources) instead of reading it back from the database on every snapshot.
       */
      keepState: booleanString.default(true),
      /**
       * Longest wait between a failed watch's reconnects (each wait doubles from 250 ms, ±20 %
       * jitter); after an API outage the watches relist within about this long.
       */
      watchBackoffMax: durationSchema
        .pipe(z.number().max(300_000, 'at most 5m: a longer wait leaves watches down long after the API is back'))
        .default(5_000),
      /**
       * Whether each inventory holder's own verdict (a Kustomization's Ready, an Application's
       * health, the applier's actuation, an owner's readiness) joins its phases' statuses. Set a
       * source to false for the members-only (kstatus) view; its conditions are recorded either way.
       */
      holderVerdicts: z
        .strictObject({
          flux: booleanString.default(true),
          argocd: booleanString.default(true),
          kpt: booleanString.default(true),
          owner: booleanString.default(true),
        })
        .default({ flux: true, argocd: true, kpt: true, owner: true }),
    })
    .default({
      interval: 30_000,
      live: true,
      liveDebounce: 25,
      keepState: true,
      watchBackoffMax: 5_000,
      holderVerdicts: { flux: true, argocd: true, kpt: true, owner: true },
    }),
  /** What is dropped from stored object revisions, besides Secret data and last-applied-configuration. */
  history: z
    .strictObject({ redactAnnotations: z.array(z.string().min(1)).default([]) })
    .default({ redactAnnotations: [] }),
  /** How long each kind of history is kept (e.g. `observationTicks: 30d`); a kind left out is kept forever. */
  retention: retentionPolicySchema.extend({ compactEvery: durationSchema.default(3_600_000) }).optional(),
  /**
   * Where clusters come from besides `clusters:`. `kubeconfig` is a file or a `KUBECONFIG`-style
   * list (`a:b`); the in-cluster fields describe the pod's service account, used when nothing else
   * is configured.
   */
  kube: z
    .strictObject({
      kubeconfig: z.string().min(1).optional(),
      serviceHost: z.string().min(1).optional(),
      servicePort: z
        .string()
        .regex(/^\d{1,5}$/, 'must be a port number')
        .optional(),
      inClusterName: z.string().min(1).default('in-cluster'),
      serviceAccountDir: z.string().min(1).default(SERVICE_ACCOUNT_DIR),
      /** Proxies for clusters without `proxy-url`, as kubectl reads them from the environment. */
      httpsProxy: z.string().optional(),
      httpProxy: z.string().optional(),
      noProxy: z.string().optional(),
    })
    .default({ inClusterName: 'in-cluster', serviceAccountDir: SERVICE_ACCOUNT_DIR }),
  demo: z.strictObject({ enabled: booleanString.optional() }).default({}),
  /** Where the `phaselog` CLI's client commands (status, history, gate, ...) send their queries. */
  client: z
    .strictObject({
      url: z
        .url({ protocol: /^https?$/, error: 'must be an http(s):// URL of the GraphQL endpoint' })
        .default('http://127.0.0.1:4000/graphql'),
      token: z.string().min(1).optional(),
    })
    .default({ url: 'http://127.0.0.1:4000/graphql' }),
  clusters: clustersConfigSchema.default([]),
  /**
   * Phases declared here instead of by an inventory object: resource lists and label selectors, as a
   * list, or `{ declared: [...], owners: [{ kind, ownedKinds }] }` with owner kinds whose objects are phases.
   */
  phases: phasesConfigSchema.default({ declared: [], owners: [] }),
  /** Phase plans: ordered lists of phases (besides those inventories declare by labels). */
  plans: declaredPlansSchema.default([]),
  health: healthConfigSchema.optional(),
  /** Transition notifications: routes from the change log to webhooks, Slack and CloudEvents receivers. */
  notifications: notificationsConfigSchema.default({ scanInterval: 1000, routes: [] }),
  /** Checks whose conditions phaselog records on the phases they select (http, cel, webhook). */
  checks: checksConfigSchema.default([]),
  /** Scheduled audit reports, stored for download. */
  reports: reportsConfigSchema.default({ schedules: [] }),
  /**
   * `GET /metrics` (Prometheus) on the API port and on a worker's probe port. Open like `/readyz`
   * unless `token` is set; then a scrape must send it as a bearer token.
   */
  metrics: z.strictObject({ token: z.string().min(16, 'at least 16 characters').optional() }).default({}),
  /** The GraphQL API's access and limits. */
  api: z
    .strictObject({
      /**
       * Let requests without a token read (never admin). Unset: on when the server binds a loopback
       * address (the embedded default), off otherwise; a non-loopback bind with no API token and
       * no explicit setting refuses to start.
       */
      anonymousRead: booleanString.optional(),
      /** Answer introspection queries. @default true */
      introspection: booleanString.default(true),
      /** Serve GraphiQL to browsers on GET /graphql (only with introspection on). @default true */
      graphiql: booleanString.default(true),
      /** Deepest field nesting a query may have. @default 12 */
      maxDepth: z.coerce.number().int().min(2).max(64).default(12),
      /** Largest query cost (fields, times page sizes). @default 50000 */
      maxCost: z.coerce.number().int().min(10).default(50_000),
      /** Most aliases in an operation, as it expands its fragments (`__typename` included). @default 30 */
      maxAliases: z.coerce.number().int().min(0).default(30),
      /** Most lexical tokens in a query document, refused before it is parsed. @default 1000 */
      maxTokens: z.coerce.number().int().min(200).default(1_000),
      /** Origins whose web pages may use the API (WebSocket and HTTP) besides same-origin ones. @default [] */
      allowedOrigins: originList.optional(),
      /** Host names the API answers to besides loopback ones (checked on loopback binds, and on any bind once set). @default [] */
      allowedHosts: hostNameList.optional(),
      /** WebSocket limits; each defaults as in DEFAULT_WEBSOCKET_LIMITS (src/graphql/ws-limits.ts). */
      webSocket: z
        .strictObject({
          maxMessageBytes: z.coerce.number().int().min(1024).optional(),
          maxConnectionsPerIp: z.coerce.number().int().min(1).optional(),
          maxConnectionsPerToken: z.coerce.number().int().min(1).optional(),
          maxOperationsPerConnection: z.coerce.number().int().min(1).optional(),
          connectionInitTimeout: durationSchema.optional(),
        })
        .optional(),
    })
    .default({ introspection: true, graphiql: true, maxDepth: 12, maxCost: 50_000, maxAliases: 30, maxTokens: 1_000 }),
});

export type Config = z.infer<typeof configSchema> & {
  /** Directory of phaselog.yaml (relative paths in it resolve from here), or the working directory. */
  baseDir: string;
  /** Path of the phaselog.yaml that was read, if any. */
  configFile?: string;
};

/** One problem with the configuration: the key and what is wrong with it. */
export interface ConfigIssue {
  key: string;
  message: string;
}

/** Invalid configuration. `issues` names each bad key. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly issues: ConfigIssue[]) {
    super(issues.map((i) => `${i.key}: ${i.message}`).join('; '));
  }
}

type Env = Record<string, string | undefined>;

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    node = (typeof next === 'object' && next !== null && !Array.isArray(next) ? next : (node[part] = {})) as Record<
      string,
      unknown
    >;
  }
  node[parts.at(-1) as string] = value;
}

function readConfigFile(file: string): { data: Record<string, unknown>; issues: ConfigIssue[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return {
      data: {},
      issues: [{ key: 'PHASELOG_CONFIG', message: `cannot read ${file}: ${(error as Error).message}` }],
    };
  }
  try {
    const data: unknown = parseYaml(text) ?? {};
    if (typeof data !== 'object' || Array.isArray(data)) {
      return { data: {}, issues: [{ key: file, message: 'must be a YAML mapping of config keys' }] };
    }
    return { data: data as Record<string, unknown>, issues: [] };
  } catch (error) {
    return { data: {}, issues: [{ key: file, message: `not valid YAML: ${(error as Error).message.split('\n')[0]}` }] };
  }
}

/**
 * Load and validate the configuration.
 * @param env environment variables (defaults to `process.env`)
 * @param cwd directory in which `phaselog.yaml` is looked for
 * @param overrides values set by the command line (win over everything else)
 * @throws ConfigError naming every bad key
 */
export function loadConfig(
  env: Env = process.env,
  cwd: string = process.cwd(),
  overrides: Record<string, unknown> = {},
): Config {
  const issues: ConfigIssue[] = [];
  const explicitFile = env.PHASELOG_CONFIG;
  const configFile = explicitFile ? path.resolve(cwd, explicitFile) : path.join(cwd, 'phaselog.yaml');
  let raw: Record<string, unknown> = {};
  let usedFile: string | undefined;
  if (explicitFile || existsSync(configFile)) {
    const read = readConfigFile(configFile);
    raw = read.data;
    issues.push(...read.issues);
    usedFile = configFile;
  }

  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value === undefined || value === '' || name === 'PHASELOG_CONFIG') continue;
    setPath(raw, key, value);
  }
  for (const name of Object.keys(env)) {
    if (name.startsWith('PHASELOG_') && !(name in ENV_KEYS)) {
      issues.push({
        key: name,
        message: `unknown setting (known: ${Object.keys(ENV_KEYS)
          .filter((k) => k.startsWith('PHASELOG_'))
          .join(', ')})`,
      });
    }
  }
  for (const [key, value] of Object.entries(overrides)) {
    if (value !== undefined) setPath(raw, key, value);
  }

  const envNameOf = (key: string): string | undefined =>
    Object.entries(ENV_KEYS).find(([name, k]) => k === key && env[name] !== undefined && env[name] !== '')?.[0];
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === 'unrecognized_keys') {
        for (const unknown of issue.keys) {
          issues.push({ key: [...issue.path.map(String), unknown].join('.'), message: 'unknown key' });
        }
        continue;
      }
      const key = issue.path.map(String).join('.') || '(root)';
      const fromEnv = envNameOf(key);
      issues.push({ key: fromEnv ? `${fromEnv} (${key})` : key, message: issue.message });
    }
  }
  if (issues.length > 0 || !parsed.success) throw new ConfigError(issues);

  const config = parsed.data;
  const baseDir = usedFile ? path.dirname(usedFile) : cwd;
  const fileIssues = receiverFileIssues(config.notifications, baseDir);
  if (fileIssues.length > 0) throw new ConfigError(fileIssues);
  return {
    ...config,
    stateDir: path.resolve(cwd, config.stateDir),
    baseDir,
    ...(usedFile ? { configFile: usedFile } : {}),
  };
}

/**
 * Reads a check's secret (a header value, a webhook's HMAC key) from its file (relative to
 * phaselog.yaml's directory) or environment variable, at the time of use, so a rotated secret is
 * picked up without a restart. Resolves the value; rejects naming the source, never the value.
 */
export async function readSecret(source: SecretSource, baseDir: string, env: Env = process.env): Promise<string> {
  if ('env' in source) {
    const value = env[source.env];
    if (value === undefined || value === '')
      throw new SecretUnavailable(`environment variable ${source.env} is not set`);
    return value;
  }
  const { readFile } = await import('node:fs/promises');
  try {
    return (await readFile(path.resolve(baseDir, source.file), 'utf8')).trim();
  } catch (error) {
    throw new SecretUnavailable(
      `cannot read secret file ${source.file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
}

/** A check's secret cannot be read (see {@link readSecret}). */
export class SecretUnavailable extends Error {
  override readonly name = 'SecretUnavailableError';
}
