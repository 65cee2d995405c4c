import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthChecker } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, loadObject } from './helpers.ts';

/**
 * One checker holds every hostile script (one folder, hence one kind, each) plus a well-behaved
 * one, so each row also proves that the next evaluation on the same Lua state still works.
 */
const hostile: Record<string, { script: string; message: RegExp }> = {
  InfiniteLoop: { script: 'while true do end', message: /instruction limit of 200000/ },
  LoopInsidePcall: {
    script: 'while true do pcall(function() while true do end end) end',
    message: /instruction limit of 200000/,
  },
  LoopInsideCoroutine: {
    script: 'local co = coroutine.create(function() while true do end end) while true do coroutine.resume(co) end',
    message: /instruction limit of 200000/,
  },
  MemoryBomb: {
    script: 'local t = {} local s = string.rep("x", 4096) for i = 1, 1e9 do t[i] = s .. i end',
    message: /memory limit of 8 MiB/,
  },
  HugeString: {
    script: 'local s = string.rep("x", 1e9) return { status = "Healthy" }',
    message: /instruction limit of 200000/,
  },
  RuntimeError: {
    script: 'local hs = {}\nhs.status = obj.status.missing.field\nreturn hs',
    message: /RuntimeError\/health\.lua:2: attempt to index a nil value \(field 'missing'\)/,
  },
  ExplicitError: { script: 'error("operator unreachable")', message: /operator unreachable/ },
  ModifiesLibrary: {
    script: 'string.upper = nil return { status = "Healthy" }',
    message: /read-only library 'string'/,
  },
  Finalizer: {
    script: 'setmetatable({}, { __gc = function() while true do end end }) return {}',
    message: /__gc metamethods are not allowed/,
  },
  LoadsCode: { script: 'return load("return 1")()', message: /attempt to call a nil value \(global 'load'\)/ },
  ReadsFile: {
    script: 'return io.open("/etc/passwd"):read("*a")',
    message: /attempt to index a nil value \(global 'io'\)/,
  },
  RunsProcess: { script: 'return os.execute("id")', message: /attempt to call a nil value \(field 'execute'\)/ },
  CatastrophicPattern: {
    script: 'local s = string.rep("a", 30000) return { status = "Healthy", message = tostring(s:find(".-.-.-b")) }',
    message: /exceeded the instruction limit of 200000 in string\.find \(pattern matching on a 30000-byte subject\)/,
  },
  RequiresModule: { script: 'local s = require("socket") return s', message: /module 'socket' not found/ },
  UsesDebug: { script: 'debug.sethook() return {}', message: /attempt to index a nil value \(global 'debug'\)/ },
};

const wellBehaved = `leaked = (leaked or 0) + 1
return { status = "Healthy", message = "run " .. leaked .. " " .. tostring(string.upper ~= nil) }`;

function objectOfKind(kind: string): Record<string, unknown> {
  return { ...loadObject('bucket'), kind };
}

describe('Lua sandbox', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const files: Record<string, string> = { 'rc/s3.services.k8s.aws/Bucket/health.lua': wellBehaved };
    for (const [kind, { script }] of Object.entries(hostile))
      files[`rc/s3.services.k8s.aws/${kind}/health.lua`] = script;
    const created = await createCheckerFromTree(files, {
      luaDirectories: ['rc'],
      lua: { instructionLimit: 200_000, memoryLimitMiB: 8, timeoutMs: 5_000 },
    });
    expect(created.errors).toEqual([]);
    checker = created.checker;
    dispose = created.dispose;
  });

  afterAll(() => dispose());

  it.each(Object.entries(hostile).map(([kind, c]) => [kind, c.message] as const))(
    '%s gives Unknown (HEALTH_CHECK_ERROR) and the next evaluation works normally',
    (kind, message) => {
      const result = checker.evaluate(objectOfKind(kind));
      expect(result).toMatchObject({ status: 'Unknown', reason: 'HEALTH_CHECK_ERROR' });
      expect(result?.message).toMatch(message);
      expect(result?.customHealth).toMatchObject({ engine: 'lua', health: 'Error' });
      expect(checker.evaluate(objectOfKind('Bucket'))).toMatchObject({ status: 'Current', message: 'run 1 true' });
    },
  );

  it('gives every evaluation fresh globals, so nothing leaks between runs', () => {
    const messages = [1, 2, 3].map(() => checker.evaluate(objectOfKind('Bucket'))?.message);
    expect(messages).toEqual(['run 1 true', 'run 1 true', 'run 1 true']);
  });

  it('never lets a script change the object the caller passed in', () => {
    const object = objectOfKind('Bucket');
    const before = JSON.stringify(object);
    checker.evaluate(object);
    expect(JSON.stringify(object)).toBe(before);
  });
});

describe('Lua wall-clock limit', () => {
  it('stops a script that outlives its time budget even with a huge instruction budget', async () => {
    const { checker, dispose } = await createCheckerFromTree(
      { 'rc/s3.services.k8s.aws/Bucket/health.lua': 'while true do end' },
      { luaDirectories: ['rc'], lua: { instructionLimit: 1e15, memoryLimitMiB: 8, timeoutMs: 50 } },
    );
    try {
      const result = checker.evaluate(objectOfKind('Bucket'));
      expect(result).toMatchObject({
        status: 'Unknown',
        reason: 'HEALTH_CHECK_ERROR',
        message: 'Lua script exceeded the time limit of 50 ms',
      });
    } finally {
      dispose();
    }
  });

  it('stops a catastrophic pattern mid-match at the time limit when the instruction budget is huge', async () => {
    const script =
      'local s = string.rep("a", 5000) return { status = "Healthy", message = tostring(s:find(".-.-.-.-b")) }';
    const { checker, dispose } = await createCheckerFromTree(
      { 'rc/s3.services.k8s.aws/Bucket/health.lua': script },
      { luaDirectories: ['rc'], lua: { instructionLimit: 1e15, memoryLimitMiB: 8, timeoutMs: 50 } },
    );
    try {
      const started = Date.now();
      const result = checker.evaluate(objectOfKind('Bucket'));
      expect(result).toMatchObject({
        status: 'Unknown',
        reason: 'HEALTH_CHECK_ERROR',
        message: 'Lua script exceeded the time limit of 50 ms in string.find (pattern matching on a 5000-byte subject)',
      });
      // The deadline is checked every 16k steps; a generous margin for a loaded 2-core machine.
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      dispose();
    }
  });
});
