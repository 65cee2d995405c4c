/**
 * Prisma's schema engine, run as WebAssembly in this process with the `pg` driver adapter.
 *
 * Prisma 7's CLI downloads a native schema engine at start-up, which fails on air-gapped machines.
 * The same engine ships on npm as `@prisma/schema-engine-wasm`; this module loads it and fixes the
 * three things that break when it is driven through `@prisma/adapter-pg` (see docs/prisma-offline.md):
 * 1. `pg` reports columns of type `name` (OID 19) and `"char"` (OID 18) that the adapter cannot map;
 *    they are relabelled as `text` before the adapter sees them.
 * 2. The adapter builds the shadow database's pool from the main `connectionString`, which wins over
 *    the `database` override, so the "shadow" would be the real database. We connect with separate
 *    host/port/user/database fields instead.
 * 3. The adapter drops the shadow database before closing its pool, stalling on "being accessed by
 *    other users"; we close the pool first and drop `WITH (FORCE)`.
 */
import { readFile, readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type * as EngineModule from '@prisma/schema-engine-wasm';

type SchemaEngine = EngineModule.SchemaEngine;
type MigrationList = EngineModule.MigrationList;

const TEXT_OID = 25;
const UNMAPPED_OIDS = new Set([18, 19]);

function relabelColumns(res: pg.QueryResult | undefined): void {
  for (const field of res?.fields ?? []) {
    if (UNMAPPED_OIDS.has(field.dataTypeID)) field.dataTypeID = TEXT_OID;
  }
}

/** A `pg` client whose result columns of type `name`/`"char"` read as `text` (fix 1). */
class RelabellingClient extends pg.Client {
  // pg's query overloads are too wide to restate; we wrap both the callback and the promise form.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: Error | null, res: pg.QueryResult) => {
        if (!err) relabelColumns(res);
        last(err, res);
      };
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const result = (super.query as (...a: any[]) => any)(...args);
    if (result && typeof result.then === 'function') {
      return result.then((res: pg.QueryResult) => {
        relabelColumns(res);
        return res;
      });
    }
    return result;
  }
}

/** Connection fields parsed from a postgres:// URL, passed to `pg` separately (fix 2). */
export interface DbConnectionFields {
  host: string;
  port: number;
  user: string;
  password?: string;
  database: string;
}

/** Parse a `postgres://` or `postgresql://` URL into separate connection fields. */
export function parseDatabaseUrl(url: string): DbConnectionFields {
  const parsed = new URL(url);
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new Error(`not a PostgreSQL URL (expected postgres:// or postgresql://, got ${parsed.protocol}//)`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  const host = parsed.searchParams.get('host') ?? (decodeURIComponent(parsed.hostname) || '127.0.0.1');
  return {
    host,
    port: parsed.port ? Number(parsed.port) : 5432,
    user: decodeURIComponent(parsed.username) || 'postgres',
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    database: database || 'postgres',
  };
}

function createPool(fields: DbConnectionFields): pg.Pool {
  const pool = new pg.Pool({ ...fields, max: 4, Client: RelabellingClient });
  // A connection the server ends while the pool holds it idle or is ending it (the shadow database
  // dropped WITH (FORCE), a restart) reaches the pool as an error event; the pool drops that
  // connection. Without a listener the event ends the process (seen as an uncaught 57P01
  // "terminating connection due to administrator command" after the drift check).
  pool.on('error', () => undefined);
  return pool;
}

/** A migration-aware adapter factory for the schema engine, with fixes 1–3 applied. */
export function createMigrationAdapterFactory(
  fields: DbConnectionFields,
  mainPool: pg.Pool = createPool(fields),
): SqlMigrationAwareDriverAdapterFactory {
  const main = new PrismaPg(mainPool);
  return {
    provider: 'postgres',
    adapterName: main.adapterName,
    connect: () => main.connect(),
    async connectToShadowDb(): Promise<SqlDriverAdapter> {
      const name = `phaselog_shadow_${randomUUID().replaceAll('-', '')}`;
      const admin = new pg.Client({ ...fields });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.end();
      }
      const shadowPool = createPool({ ...fields, database: name });
      const adapter = await new PrismaPg(shadowPool).connect();
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose();
        await shadowPool.end(); // fix 3: close our connections before dropping
        const dropper = new pg.Client({ ...fields });
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
      };
      return adapter;
    },
  };
}

/** The slice of the WebAssembly API used here (the DOM lib, which declares it, is not loaded). */
interface WasmApi {
  instantiate(
    bytes: Uint8Array,
    imports: Record<string, unknown>,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let runtimePromise: Promise<typeof EngineModule> | undefined;

/** Instantiate the WebAssembly engine once per process (wasm-bindgen keeps global state). */
function loadRuntime(): Promise<typeof EngineModule> {
  runtimePromise ??= (async () => {
    // The engine reports a Rust panic through this global before it traps; keep the message so the
    // error says what went wrong instead of "unreachable".
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { message: string; set_message(message: string): void } };
    g.PRISMA_WASM_PANIC_REGISTRY ??= {
      message: '',
      set_message(message: string) {
        this.message = message;
      },
    };
    const require = createRequire(import.meta.url);
    const bindingsPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const runtime = (await import('@prisma/schema-engine-wasm/schema_engine_bg')) as typeof EngineModule & {
      __wbg_set_wasm(exports: Record<string, unknown>): void;
    };
    const bytes = await readFile(bindingsPath.replace(/\.js$/, '.wasm'));
    const { instance } = await wasmApi.instantiate(bytes, { './schema_engine_bg.js': runtime });
    runtime.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return runtime;
  })();
  return runtimePromise;
}

/** A schema file as the engine wants it: [path, content]. */
export type SchemaFile = [path: string, content: string];

/** A running schema engine and the connections it holds. */
export interface OpenedSchemaEngine {
  engine: SchemaEngine;
  /** Free the engine and close its connections (which releases the engine's advisory lock). */
  close(): Promise<void>;
}

/** Start a schema engine over the given database; always `close()` it. */
export async function openSchemaEngine(
  fields: DbConnectionFields,
  schemaFiles: SchemaFile[] | undefined,
  onLog: (message: string) => void = () => {},
): Promise<OpenedSchemaEngine> {
  const runtime = await loadRuntime();
  const pool = createPool(fields);
  const engine = await runtime.SchemaEngine.new(
    { datamodels: schemaFiles },
    onLog,
    bindMigrationAwareSqlAdapterFactory(createMigrationAdapterFactory(fields, pool)),
  );
  return {
    engine,
    async close() {
      engine.free();
      await pool.end();
    },
  };
}

/** Read a Prisma migrations folder into the list the engine expects (the engine cannot read files). */
export async function readMigrationsList(migrationsDir: string): Promise<MigrationList> {
  const entries = await readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const dirs = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  const lockContent = await readFile(lockPath, 'utf8').catch(() => null);
  return {
    baseDir: migrationsDir,
    lockfile: { path: 'migration_lock.toml', content: lockContent },
    shadowDbInitScript: '',
    migrationDirectories: await Promise.all(
      dirs.map(async (dir) => {
        const content = await readFile(path.join(migrationsDir, dir, 'migration.sql'), 'utf8').catch((err: Error) => ({
          error: err.message,
        }));
        return {
          path: dir,
          migrationFile: {
            path: 'migration.sql',
            content:
              typeof content === 'string'
                ? { tag: 'ok' as const, value: content }
                : { tag: 'error' as const, value: content.error },
          },
        };
      }),
    ),
  } as MigrationList;
}

export const NO_FILTERS = { externalTables: [], externalEnums: [] };
