#!/usr/bin/env node
// Stands in for Prisma's native schema-engine binary: the Prisma CLI spawns this file (through
// PRISMA_SCHEMA_ENGINE_BINARY, set by scripts/prisma.mjs) and speaks JSON-RPC 2.0 to it, one JSON
// object per line on stdin/stdout. Requests are served by the WebAssembly engine in
// src/store/schema-engine.ts, so `prisma migrate dev|deploy|status|diff` and `db push` work offline.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { register } from 'tsx/esm/api';

register();
const { openSchemaEngine, parseDatabaseUrl } = await import('../src/store/schema-engine.ts');

const args = process.argv.slice(2);
const datamodels = [];
let datasource = {};
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--datamodels') datamodels.push(args[++i]);
  else if (args[i] === '--datasource') datasource = JSON.parse(args[++i]);
  else if (args[i] === '--version' || args[i] === '-V') {
    process.stdout.write('schema-engine-cli (wasm shim) 7.10.0\n');
    process.exit(0);
  }
}

const url = datasource.url ?? process.env.DATABASE_URL;

// `schema-engine --datasource <json> cli <command>`: one-shot database commands. The CLI reads
// failures from stderr as JSON log lines after the first line.
const cliAt = args.indexOf('cli');
if (cliAt !== -1) {
  const { default: pg } = await import('pg');
  const fields = parseDatabaseUrl(url);
  const fail = (code, message) => {
    process.stderr.write(
      `schema-engine wasm shim\n${JSON.stringify({ level: 'ERROR', target: 'schema_engine::logger', fields: { error_code: code, message } })}\n`,
    );
    process.exit(1);
  };
  const run = async (database, sql) => {
    const client = new pg.Client({ ...fields, database });
    await client.connect();
    try {
      if (sql) await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const quoted = `"${fields.database.replaceAll('"', '""')}"`;
  try {
    switch (args[cliAt + 1]) {
      case 'can-connect-to-database':
        await run(fields.database);
        break;
      case 'create-database':
        await run('postgres', `CREATE DATABASE ${quoted}`);
        break;
      case 'drop-database':
        await run('postgres', `DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
        break;
      default:
        fail('P1000', `unsupported schema-engine cli command: ${args[cliAt + 1]}`);
    }
  } catch (error) {
    if (error.code === '3D000')
      fail(
        'P1003',
        `Database \`${fields.database}\` does not exist on the database server at \`${fields.host}:${fields.port}\`.`,
      );
    fail('P1001', `Can't reach database server at \`${fields.host}:${fields.port}\`: ${error.message}`);
  }
  process.exit(0);
}
const files = datamodels.map((p) => [p, readFileSync(p, 'utf8')]);
// The engine only needs a database for commands that touch one; diff between files works without.
const fields = parseDatabaseUrl(url ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
const log = (message) => process.stderr.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
const enginePromise = openSchemaEngine(fields, files.length ? files : undefined, log);

const renamed = { getDatabaseVersion: 'version' };

function reply(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

const pending = new Set();
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!line.trim()) return;
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (request.method === undefined) return; // a response to a `print` request we never send
  const work = (async () => {
    const { engine } = await enginePromise;
    const method = renamed[request.method] ?? request.method;
    if (typeof engine[method] !== 'function') {
      reply({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: -32601, message: `Method not found: ${request.method}` },
      });
      return;
    }
    try {
      const result = await engine[method](request.params ?? {});
      reply({ jsonrpc: '2.0', id: request.id, result: result === undefined ? null : result });
    } catch (error) {
      // The engine throws its user-facing errors as objects; pass them through as JSON-RPC data.
      const data = typeof error === 'object' && error !== null ? error : { message: String(error) };
      reply({
        jsonrpc: '2.0',
        id: request.id,
        error: {
          code: 4466,
          message: 'An error happened. Check the data field for details.',
          data: { is_panic: false, ...data, message: data.message ?? String(error) },
        },
      });
    }
  })();
  pending.add(work);
  work.finally(() => pending.delete(work));
});
lines.on('close', async () => {
  await Promise.allSettled([...pending]);
  try {
    await (await enginePromise).close();
  } catch {
    // nothing left to free
  }
  process.exit(0);
});
