import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthChecker } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, createLuaChecker, loadObject } from './helpers.ts';

/**
 * Hostile health scripts (issue #17, item 16). Each must end as Unknown (HEALTH_CHECK_ERROR) with
 * a message saying which limit it hit, never as the Healthy it asks for, and the next evaluation
 * on the same Lua state must work normally.
 *
 * The scripts that escaped a limit before are written to terminate even then (a bounded number of
 * swallowed aborts, sizes that take seconds rather than minutes) and to return Healthy when they
 * got through, so the suite finishes and fails without the fixes instead of hanging. The vitest
 * timeout of each case is the backstop for a runaway.
 */
const LIMITS = { instructionLimit: 200_000, memoryLimitMiB: 16, timeoutMs: 5_000 };
const HOSTILE_TIMEOUT_MS = 30_000;

const INSTRUCTIONS = /exceeded the instruction limit of 200000/;
const MEMORY = /exceeded the memory limit of 16 MiB|exceeded the limit of 4 MiB for a single string or table/;
/** Bombs of many small objects run out of instructions or of memory first, depending on their size. */
const INSTRUCTIONS_OR_MEMORY = /exceeded the instruction limit of 200000|exceeded the memory limit of 16 MiB/;
const MEBIBYTE_STRING = 'local s = "x" for i = 1, 20 do s = s .. s end';

/** The abort of a pattern call that spent the rest of the budget, naming the call and the subject's size. */
function patternAbort(call: string, subjectBytes: number): RegExp {
  const name = call.replace('.', '\\.');
  return new RegExp(
    `^Lua script exceeded the instruction limit of 200000 in ${name} \\(pattern matching on a ${subjectBytes}-byte subject\\)$`,
  );
}

/** `health` is what customHealth reports: 'Error' when the script failed, else the status it returned. */
const hostile: Record<string, { script: string; message: RegExp; health?: string }> = {
  // One C call that loops per repetition, copying nothing.
  RepOfEmptyString: { script: 'local s = string.rep("", 1e8) return { status = "Healthy" }', message: INSTRUCTIONS },
  RepWithSeparator: {
    script: 'local s = string.rep("", 1e8, "") return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  // One C call that walks the whole range of two empty tables.
  MoveOfEmptyRange: { script: 'table.move({}, 1, 3e7, 1) return { status = "Healthy" }', message: INSTRUCTIONS },
  ConcatOfHugeRange: {
    script: 'return { status = "Healthy", message = table.concat({}, "", 1, 1e8) }',
    message: INSTRUCTIONS,
  },
  UnpackOfHugeRange: {
    script: 'local t = { table.unpack({}, 1, 9e5) } return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  FormatWithHugeWidth: {
    script: 'return { status = "Healthy", message = string.format("%999999999d", 1) }',
    message: /invalid conversion/,
  },
  // table.insert and table.remove shift as many elements as __len claims.
  InsertWithLyingLength: {
    script:
      'local t = setmetatable({}, { __len = function() return 3e7 end }) table.insert(t, 1, "x") return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  RemoveWithLyingLength: {
    script:
      'local t = setmetatable({}, { __len = function() return 3e7 end }) table.remove(t, 1) return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  // Converting a long numeral scans it in C, again on every call.
  TonumberOfLongNumeral: {
    script:
      'local s = "1" for i = 1, 20 do s = s .. s end for i = 1, 200 do tonumber(s) end return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  // One strftime per conversion of a format of any length.
  DateWithLongFormat: {
    script: 'local f = "%c" for i = 1, 14 do f = f .. f end local d = os.date(f) return { status = "Healthy" }',
    message: INSTRUCTIONS,
  },
  // Backtracking over every split of the subject: the matcher counts its steps and the run is
  // stopped mid-match when the budget is spent, whatever the shape of the pattern.
  LazyQuantifiersOnLiterals: {
    script: 'local s = string.rep("a", 250) return { status = "Healthy", message = tostring(s:find("a-a-a-b")) }',
    message: patternAbort('string.find', 250),
  },
  GreedyQuantifiersInMatch: {
    script: 'local s = string.rep("a", 250) return { status = "Healthy", message = tostring(s:match("a*a*a*b")) }',
    message: patternAbort('string.match', 250),
  },
  FourGreedyItemsThenMissingByte: {
    script: 'local s = string.rep("a", 120) return { status = "Healthy", message = tostring(s:match("a*a*a*a*b")) }',
    message: patternAbort('string.match', 120),
  },
  LazyCapturesOverEverySplit: {
    script: `local s = string.rep("a", 200)
return { status = "Healthy", message = tostring(s:match(string.rep("(.-)", 8) .. "b")) }`,
    message: patternAbort('string.match', 200),
  },
  PlusQuantifiersInGsub: {
    script: 'local s = string.rep("a", 250) return { status = "Healthy", message = tostring(s:gsub("a+a+a+b", "")) }',
    message: patternAbort('string.gsub', 250),
  },
  OptionalQuantifiersInGmatch: {
    script:
      'local s = string.rep("a", 22) for m in s:gmatch(string.rep("a?", 22) .. string.rep("a", 22) .. "b") do end return { status = "Healthy" }',
    message: patternAbort('string.gmatch', 22),
  },
  BalancedScanFromEveryStart: {
    script: 'local s = string.rep("(", 20000) return { status = "Healthy", message = tostring(s:gsub("%b()", "")) }',
    message: patternAbort('string.gsub', 20000),
  },
  BackReferencesOverEverySplit: {
    script: 'local s = string.rep("a", 300) return { status = "Healthy", message = tostring(s:find("(a*)(a*)%1%2b")) }',
    message: patternAbort('string.find', 300),
  },
  LongBracketClassOnLongSubject: {
    script: `local class = "[" .. string.rep("b", 20000) .. "]"
local s = string.rep("a", 20000)
return { status = "Healthy", message = tostring(s:find(class)) }`,
    message: patternAbort('string.find', 20000),
  },
  // The budget a match spent is spent: catching the abort does not give it back.
  PatternAbortSwallowedByPcall: {
    script: `local s = string.rep("a", 250)
local caught = 0
for i = 1, 50 do
  if not pcall(string.find, s, "a-a-a-b") then caught = caught + 1 end
end
return { status = "Healthy", message = "caught " .. caught }`,
    message: patternAbort('string.find', 250),
  },
  PatternInCloseHandlerAfterAbort: {
    script: `local s = string.rep("a", 40)
local ok = pcall(function()
  local guard <close> = setmetatable({}, { __close = function() s:find("a-a-a-b") end })
  while true do end
end)
return { status = "Healthy", message = tostring(ok) }`,
    message: INSTRUCTIONS,
  },
  ManyCheapMatchesInALoop: {
    script: 'local n = 0 while true do if ("2026-01-02"):match("^(%d+)-(%d+)-(%d+)$") then n = n + 1 end end',
    message: INSTRUCTIONS,
  },
  // A __close handler that raises replaces the abort's error, which pcall then swallowed.
  CloseHandlerInsidePcall: {
    script: `local escaped = 0
while true do
  pcall(function()
    local guard <close> = setmetatable({}, { __close = function() error("replaced") end })
    while true do end
  end)
  escaped = escaped + 1
  if escaped > 2000 then return { status = "Healthy", message = "escaped" } end
end`,
    message: INSTRUCTIONS,
  },
  // coroutine.wrap closes the failed coroutine, running its __close handlers, before it re-raises.
  CloseHandlerInsideWrappedCoroutine: {
    script: `local escaped = 0
while true do
  pcall(coroutine.wrap(function()
    local guard <close> = setmetatable({}, { __close = function() error("replaced") end })
    while true do end
  end))
  escaped = escaped + 1
  if escaped > 2000 then return { status = "Healthy", message = "escaped" } end
end`,
    message: INSTRUCTIONS,
  },
  CloseHandlerInsideXpcall: {
    script: `local escaped = 0
while true do
  xpcall(function()
    local guard <close> = setmetatable({}, { __close = function() error("replaced") end })
    while true do end
  end, function(e) return e end)
  escaped = escaped + 1
  if escaped > 2000 then return { status = "Healthy", message = "escaped" } end
end`,
    message: INSTRUCTIONS,
  },
  // The returned table's metamethods ran after the hook and the memory cap were removed.
  ResultIndexRunsUnlimited: {
    script: `return setmetatable({}, { __index = function(t, k)
  local big = {}
  for i = 1, 3e6 do big[i] = i end
  return k == "status" and "Healthy" or "ran"
end })`,
    message: /Lua returned an invalid health status/,
    health: '',
  },
  AbortSwallowedThenHealthy: {
    script: `local caught = 0
for i = 1, 2000 do
  pcall(function()
    local guard <close> = setmetatable({}, { __close = function() error("replaced") end })
    while true do end
  end)
  caught = caught + 1
end
return { status = "Healthy", message = "caught " .. caught }`,
    message: INSTRUCTIONS,
  },
  UpperOfLongStringInLoop: {
    script: `${MEBIBYTE_STRING} for i = 1, 300 do local u = s:upper() end return { status = "Healthy" }`,
    message: INSTRUCTIONS,
  },
  ResultFieldsWithMetamethods: {
    script: `local looping = { __tostring = function() while true do end end, __eq = function() while true do end end,
  __len = function() while true do end end, __concat = function() while true do end end }
return { status = setmetatable({}, looping), message = "m" }`,
    message: /health status must be a string, not table/,
  },

  // The classic attacks.
  InfiniteLoop: { script: 'while true do end', message: INSTRUCTIONS },
  StringDoublingMemoryBomb: { script: 'local s = "x" while true do s = s .. s end', message: MEMORY },
  RepMemoryBomb: { script: 'local s = string.rep("x", 1e9) return { status = "Healthy" }', message: INSTRUCTIONS },
  StringsMemoryBomb: {
    script: `${MEBIBYTE_STRING} local t = {} local i = 0 while true do i = i + 1 t[i] = s .. i end`,
    message: MEMORY,
  },
  TableMemoryBomb: {
    script: 'local t = {} local i = 0 while true do i = i + 1 t[i] = { i } end',
    message: INSTRUCTIONS_OR_MEMORY,
  },
  DeepRecursion: {
    script: 'local function f(n) return 1 + f(n + 1) end return { status = "Healthy", message = tostring(f(1)) }',
    message:
      /stack overflow|exceeded the instruction limit of 200000|exceeded the memory limit|exceeded the limit of 4 MiB/,
  },
  EndlessTailCalls: { script: 'local function f() return f() end return f()', message: INSTRUCTIONS },
  CoroutineYieldLoop: {
    script: 'local co = coroutine.wrap(function() while true do coroutine.yield() end end) while true do co() end',
    message: INSTRUCTIONS,
  },
  CoroutineBomb: {
    script: 'local t = {} local i = 0 while true do i = i + 1 t[i] = coroutine.create(function() end) end',
    message: INSTRUCTIONS_OR_MEMORY,
  },
  NestedCoroutineLoops: {
    script: 'while true do coroutine.resume(coroutine.create(function() while true do end end)) end',
    message: INSTRUCTIONS,
  },
  StringMetatableRead: {
    script: 'getmetatable("").__index.upper = nil return {}',
    message: /attempt to index a boolean value/,
  },
  StringMetatableReplaced: {
    script: 'setmetatable("", {}) return {}',
    message: /bad argument #1 to 'setmetatable' \(table expected, got string\)/,
  },
  LibraryAssignment: { script: 'table.concat = nil return {}', message: /read-only library 'table'/ },
  CollectgarbageLoop: { script: 'while true do collectgarbage() collectgarbage("collect") end', message: INSTRUCTIONS },
  CollectgarbageStopThenBomb: {
    script: `collectgarbage("stop") ${MEBIBYTE_STRING} local t = {} local i = 0 while true do i = i + 1 t[i] = s .. i end`,
    message: MEMORY,
  },
  ErrorWithToString: {
    script: 'error(setmetatable({}, { __tostring = function() while true do end end }))',
    message: /raised a table value as error/,
  },
  ErrorWithFinalizer: {
    script: 'error(setmetatable({}, { __gc = function() while true do end end }))',
    message: /__gc metamethods are not allowed/,
  },
  ErrorWithFinalizerAddedLater: {
    script: 'local mt = {} local e = setmetatable({}, mt) mt.__gc = function() while true do end end error(e)',
    message: /raised a table value as error/,
  },
  Load: { script: 'return load("return 1")()', message: /attempt to call a nil value \(global 'load'\)/ },
  Loadstring: {
    script: 'return loadstring("return 1")()',
    message: /attempt to call a nil value \(global 'loadstring'\)/,
  },
  Dofile: { script: 'return dofile("/etc/passwd")', message: /attempt to call a nil value \(global 'dofile'\)/ },
  RequireIo: { script: 'return require("io").open("/etc/passwd")', message: /module 'io' not found/ },
  RequireDebug: { script: 'return require("debug").sethook()', message: /module 'debug' not found/ },
  Io: { script: 'return io.open("/etc/passwd")', message: /attempt to index a nil value \(global 'io'\)/ },
  OsExecute: { script: 'return os.execute("id")', message: /attempt to call a nil value \(field 'execute'\)/ },
  OsGetenv: { script: 'return os.getenv("HOME")', message: /attempt to call a nil value \(field 'getenv'\)/ },
  OsExit: { script: 'os.exit(1)', message: /attempt to call a nil value \(field 'exit'\)/ },
  Debug: { script: 'return debug.getregistry()', message: /attempt to index a nil value \(global 'debug'\)/ },
  Package: { script: 'return package.loaded', message: /attempt to index a nil value \(global 'package'\)/ },
  StringDump: { script: 'return string.dump(function() end)', message: /attempt to call a nil value \(field 'dump'\)/ },
  StringPack: {
    script: 'return string.pack("c100000000", "")',
    message: /attempt to call a nil value \(field 'pack'\)/,
  },
};

const wellBehaved = `leaked = (leaked or 0) + 1
return { status = "Healthy", message = "run " .. leaked }`;

function objectOfKind(kind: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...loadObject('bucket'), kind, ...extra };
}

describe('Lua sandbox against hostile scripts', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const files: Record<string, string> = { 'rc/s3.services.k8s.aws/Bucket/health.lua': wellBehaved };
    for (const [kind, { script }] of Object.entries(hostile))
      files[`rc/s3.services.k8s.aws/${kind}/health.lua`] = script;
    const created = await createCheckerFromTree(files, { luaDirectories: ['rc'], lua: LIMITS });
    expect(created.errors).toEqual([]);
    checker = created.checker;
    dispose = created.dispose;
  });

  afterAll(() => dispose());

  it.each(Object.entries(hostile).map(([kind, c]) => [kind, c.message, c.health ?? 'Error'] as const))(
    '%s gives Unknown (HEALTH_CHECK_ERROR) and the next evaluation works normally',
    (kind, message, health) => {
      const result = checker.evaluate(objectOfKind(kind));
      expect(result).toMatchObject({ status: 'Unknown', reason: 'HEALTH_CHECK_ERROR' });
      expect(result?.message).toMatch(message);
      expect(result?.customHealth).toMatchObject({ engine: 'lua', health });
      expect(checker.evaluate(objectOfKind('Bucket'))).toMatchObject({ status: 'Current', message: 'run 1' });
    },
    HOSTILE_TIMEOUT_MS,
  );
});

/** Tries every way to change what later evaluations see, and reports what it saw before trying. */
const tamperer = `local seen = string.upper("good") .. " " .. ("x"):upper() .. " " .. table.concat({ "con", "cat" }) .. " " .. tostring(undeclared)
local function try(f) pcall(f) end
try(function() local _, lib = pairs(string) lib.upper = function() return "tampered" end end)
try(function() local _, lib = pairs(table) lib.concat = function() return "tampered" end end)
try(function() for k, v in pairs(string) do if k == "upper" then rawset(string, k, function() return "tampered" end) end end end)
try(function() rawset(table, "concat", function() return "tampered" end) end)
try(function() setmetatable(_G, { __index = function() return "tampered" end }) end)
try(function() rawset(_G, "undeclared", "tampered") end)
try(function() math.randomseed(42) end)
return { status = "Healthy", message = seen }`;

const victim = `return { status = "Healthy", message = string.upper("good") .. " " .. ("x"):upper() .. " " ..
  table.concat({ "con", "cat" }) .. " " .. tostring(undeclared) .. " " .. math.random(1, 1000000000) }`;

const seeded = `math.randomseed(42) return { status = "Healthy", message = tostring(math.random(1, 1000000000)) }`;

describe('Lua sandbox isolation between evaluations', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const created = await createCheckerFromTree(
      {
        'rc/s3.services.k8s.aws/Tamperer/health.lua': tamperer,
        'rc/s3.services.k8s.aws/Victim/health.lua': victim,
        'rc/s3.services.k8s.aws/Seeded/health.lua': seeded,
      },
      { luaDirectories: ['rc'], lua: LIMITS },
    );
    expect(created.errors).toEqual([]);
    checker = created.checker;
    dispose = created.dispose;
  });

  afterAll(() => dispose());

  it("a script's tampering is invisible to another kind's script and to its own next run", () => {
    const first = checker.evaluate(objectOfKind('Tamperer'));
    expect(first).toMatchObject({ status: 'Current', message: 'GOOD X concat nil' });
    const seenByVictim = checker.evaluate(objectOfKind('Victim'))?.message ?? '';
    expect(seenByVictim).toMatch(/^GOOD X concat nil \d+$/);
    expect(checker.evaluate(objectOfKind('Tamperer'))).toMatchObject({
      status: 'Current',
      message: 'GOOD X concat nil',
    });
  });

  it("a seed one script sets does not decide another script's random numbers", () => {
    const firstOfSeed42 = checker.evaluate(objectOfKind('Seeded'))?.message;
    expect(firstOfSeed42).toMatch(/^\d+$/);
    checker.evaluate(objectOfKind('Tamperer'));
    const drawn = checker.evaluate(objectOfKind('Victim'))?.message?.split(' ').at(-1);
    expect(drawn).not.toBe(firstOfSeed42);
  });
});

describe('Lua limits leave ordinary scripts alone', () => {
  const longMessage = `${'Back-off pulling image "registry.example.com/team/app:1.2.3"; '.repeat(60)}3/5 replicas ready, retry 12 of 30`;

  it('pattern calls on a long condition message run under the default limits', async () => {
    const script = `local m = obj.status.message
local ready, total = m:match("(%d+)/(%d+) replicas ready")
local image = m:match('image "([^"]+)"')
local _, backoffs = m:gsub("Back%-off", "")
local words = 0
for _ in m:gmatch("%S+") do words = words + 1 end
local retry = tonumber(m:match("retry (%d+) of %d+$"))
local first = m:find("registry.example.com", 1, true)
local squeezed = m:gsub("%s+", " "):sub(1, 8)
local version = image:match("^.-:(.*)$")
return { status = "Progressing", message = string.format("%s/%s %s %d %d %d %d %s %s", ready, total, image, backoffs, words, retry, first, squeezed, version) }`;
    const { checker, errors, dispose } = await createLuaChecker('s3.services.k8s.aws/Bucket', script);
    try {
      expect(errors).toEqual([]);
      const result = checker.evaluate(objectOfKind('Bucket', { status: { message: longMessage } }));
      const words = longMessage.split(/\s+/).filter(Boolean).length;
      const first = longMessage.indexOf('registry.example.com') + 1;
      expect(result).toMatchObject({
        status: 'InProgress',
        message: `3/5 registry.example.com/team/app:1.2.3 60 ${words} 12 ${first} Back-off 1.2.3`,
      });
    } finally {
      dispose();
    }
  });

  it('a returned table with many entries still gives its status', async () => {
    const script = `local t = { status = "Healthy", message = "first" }
for i = 1, 50000 do t[i] = i end
return t`;
    const { checker, dispose } = await createLuaChecker('s3.services.k8s.aws/Bucket', script);
    try {
      expect(checker.evaluate(objectOfKind('Bucket'))).toMatchObject({ status: 'Current', message: 'first' });
    } finally {
      dispose();
    }
  });
});
