import { LuaFactory } from 'wasmoon';
import type { LuaEngine } from 'wasmoon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthChecker } from '../../../src/status/custom/index.ts';
import { createCheckerFromTree, loadObject } from './helpers.ts';

/**
 * String patterns in health scripts (issue #33, item 3): what ordinary patterns return under the
 * default limits, and that the sandbox's matcher gives what Lua 5.4's own does. The hostile side
 * (patterns that must still be stopped) is in lua-hostile.test.ts.
 */

/** Each script returns its findings as the message; `expected` is what a user would read. */
const everyday: Record<string, { script: string; expected: string }> = {
  RfcTimestampSixCaptures: {
    script: `local y, mo, d, h, mi, s = string.match(obj.status.lastScheduleTime, "(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z")
return { status = "Healthy", message = table.concat({ y, mo, d, h, mi, s }, " ") }`,
    expected: '2026 12 01 23 59 07',
  },
  TimestampToSeconds: {
    script: `local y, mo, d, h, mi, s = string.match(obj.status.lastScheduleTime, "(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)Z")
local t = os.time({ year = tonumber(y), month = tonumber(mo), day = tonumber(d), hour = tonumber(h), min = tonumber(mi), sec = tonumber(s) })
return { status = "Healthy", message = tostring(math.type(t)) .. " " .. tostring(t > 0) }`,
    expected: 'integer true',
  },
  DigitsUnanchored: {
    script: `return { status = "Healthy", message = string.match("3/5 replicas ready", "%d+") .. "|" .. tostring(string.match("no digits", "%d+")) }`,
    expected: '3|nil',
  },
  PathSegments: {
    script: `local parts = {}
for part in string.gmatch("/apis/apps/v1/namespaces/prod", "[^/]+") do parts[#parts + 1] = part end
return { status = "Healthy", message = #parts .. ":" .. table.concat(parts, ",") }`,
    expected: '5:apis,apps,v1,namespaces,prod',
  },
  LazyCaptureUpToSeparator: {
    script: `local name, rest = string.match("web-7d4b9c-x2x9z", "(.-)%-(.*)")
return { status = "Healthy", message = name .. "|" .. rest .. "|" .. string.match("key=value", "(.-)=") }`,
    expected: 'web|7d4b9c-x2x9z|key',
  },
  AnchoredAndUnanchored: {
    script: `local a = string.match("v1.2.3", "^v(%d+)%.(%d+)%.(%d+)$")
local b = string.match("release v1.2.3", "^v(%d+)")
local c = string.match("release v1.2.3", "v(%d+)")
local d = string.match("v1.2.3-rc1", "^v[%d.]+$")
return { status = "Healthy", message = a .. " " .. tostring(b) .. " " .. c .. " " .. tostring(d) }`,
    expected: '1 nil 1 nil',
  },
  CapturesAndPositionCaptures: {
    script: `local s, e, key, value = string.find("labels: app=web", "(%w+)=(%w+)")
local p1, word, p2 = string.match("hello world", "()(%a+)()", 7)
return { status = "Healthy", message = table.concat({ s, e, key, value, p1, word, p2 }, " ") }`,
    expected: '9 15 app web 7 world 12',
  },
  FindWithInitAndPlain: {
    script: `local m = "a.b.c"
local plainAt = string.find(m, ".", 1, true)
local patternAt = string.find(m, ".")
local fromThree = string.find(m, ".", 3, true)
local fromEnd = string.find(m, "c", -1)
local pastEnd = string.find(m, "a", 10)
local emptyAtEnd = string.find(m, "", 6)
return { status = "Healthy", message = table.concat({ plainAt, patternAt, fromThree, fromEnd, tostring(pastEnd), emptyAtEnd }, " ") }`,
    expected: '2 1 4 5 nil 6',
  },
  GmatchLoopWithCaptures: {
    script: `local out = {}
for k, v in string.gmatch("a=1, b=22, c=333", "(%w+)=(%w+)") do out[#out + 1] = k .. v end
local words = 0
for _ in string.gmatch("  one two  three ", "%S+") do words = words + 1 end
return { status = "Healthy", message = table.concat(out, ",") .. " " .. words }`,
    expected: 'a1,b22,c333 3',
  },
  GsubWithPatterns: {
    script: `local squeezed, n = string.gsub("too   many    spaces", "%s+", " ")
local swapped = string.gsub("hello world", "(%w+) (%w+)", "%2 %1")
local upper = string.gsub("ready: pods", "%a+", function(w) return w:upper() end)
local mapped = string.gsub("$x and $y", "%$(%w+)", { x = "1" })
local first = string.gsub("a.b.c", "%.", "/", 1)
local trimmed = string.gsub("  padded  ", "^%s*(.-)%s*$", "%1")
return { status = "Healthy", message = table.concat({ squeezed, n, swapped, upper, mapped, first, "[" .. trimmed .. "]" }, "|") }`,
    expected: 'too many spaces|2|world hello|READY: PODS|1 and $y|a/b.c|[padded]',
  },
  MethodCallsWithOpenLibs: {
    script: `local m = obj.status.lastScheduleTime
return { status = "Healthy", message = m:match("^(%d%d%d%d)") .. " " .. select(2, m:gsub("%d", "")) .. " " .. m:find("T", 1, true) }`,
    expected: '2026 14 11',
  },
  MalformedPatternIsAScriptError: {
    script: `local ok, err = pcall(string.find, "abc", "[a")
local ok2, err2 = pcall(string.match, "abc", "(a")
return { status = "Healthy", message = tostring(ok) .. " " .. err .. " | " .. tostring(ok2) .. " " .. err2 }`,
    expected: "false malformed pattern (missing ']') | false unfinished capture",
  },
  LongConditionMessage: {
    script: `local m = string.rep("Back-off pulling image; ", 400) .. "3/5 replicas ready"
local ready, total = m:match("(%d+)/(%d+) replicas ready$")
local n = select(2, m:gsub("Back%-off", ""))
return { status = "Healthy", message = ready .. "/" .. total .. " " .. n }`,
    expected: '3/5 400',
  },
};

function objectOfKind(kind: string): Record<string, unknown> {
  return {
    ...loadObject('bucket'),
    kind,
    status: { lastScheduleTime: '2026-12-01T23:59:07Z' },
  };
}

describe('everyday string patterns under the default limits', () => {
  let checker: HealthChecker;
  let dispose: () => void;

  beforeAll(async () => {
    const files: Record<string, string> = {};
    for (const [kind, { script }] of Object.entries(everyday))
      files[`rc/s3.services.k8s.aws/${kind}/health.lua`] = script;
    const created = await createCheckerFromTree(files, { luaDirectories: ['rc'] });
    expect(created.errors).toEqual([]);
    checker = created.checker;
    dispose = created.dispose;
  });

  afterAll(() => dispose());

  it.each(Object.entries(everyday).map(([kind, c]) => [kind, c.expected] as const))(
    '%s gives "%s"',
    (kind, expected) => {
      expect(checker.evaluate(objectOfKind(kind))).toMatchObject({ status: 'Current', message: expected });
    },
  );

  it('the timestamp parse that was refused as "pattern too complex" reads Healthy (Current)', () => {
    const result = checker.evaluate(objectOfKind('RfcTimestampSixCaptures'));
    expect(result).toMatchObject({ status: 'Current', customHealth: { engine: 'lua', health: 'Healthy' } });
    expect(result?.message).not.toMatch(/pattern too complex/);
  });
});

/**
 * The same calls through Lua 5.4's own string library (a plain wasmoon engine) and through the
 * sandbox: results and error messages must be identical. Subjects and patterns are drawn from small
 * alphabets rich in the matcher's special cases (captures, position captures, back-references,
 * %b, %f, anchors, every quantifier, classes and their complements, malformed endings).
 * Errors raised in a script's own line carry that line in both; the one known difference is a call
 * in tail position (`return string.find(s, "[")`), where Lua keeps the line for its C function and
 * the sandbox's Lua wrapper, tail-called, cannot know it.
 */
const SUBJECT_BYTES = ['a', 'b', 'a', '1', '2', ' ', '(', ')', '-', '.', '%', 'A', '\n', '\u00e9'];
const PATTERN_TOKENS = [
  'a',
  'b',
  '.',
  '%a',
  '%d',
  '%s',
  '%w',
  '%W',
  '%p',
  '%x',
  '%u',
  '%l',
  '%c',
  '%g',
  '[ab]',
  '[^a]',
  '[a-c]',
  '[%d%-]',
  '[]',
  '[^]',
  '(',
  ')',
  '()',
  '*',
  '+',
  '-',
  '?',
  '^',
  '$',
  '%b()',
  '%f[%w]',
  '%f[%W]',
  '%1',
  '%2',
  '%0',
  '%',
  '[',
  '%.',
  '%%',
  '%(',
  'é',
];
const REPLACEMENTS = [
  '"<%0>"',
  '"%1"',
  '"[%2]"',
  '"x%%"',
  '"%"',
  '"%z"',
  '5',
  'function(a, b) return b end',
  '{ a = "A", ["1"] = 9 }',
  '{ a = true }',
];

function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z ]/.test(c) ? c : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

function buildCases(count: number): string {
  const random = createRandom(33);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const rows: string[] = [];
  for (let i = 0; i < count; i++) {
    const subject = Array.from({ length: Math.floor(random() * 9) }, () => pick(SUBJECT_BYTES)).join('');
    const pattern = Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick(PATTERN_TOKENS)).join('');
    const init = pick([1, 1, 2, -2, 0, 20]);
    rows.push(`{ ${luaString(subject)}, ${luaString(pattern)}, ${init}, ${pick(REPLACEMENTS)} }`);
  }
  return `{\n${rows.join(',\n')}\n}`;
}

/** Runs every call on every case and returns one line per case; the same text in both Luas. */
const conformanceChunk = (cases: string) => `
local cases = ${cases}
local function show(...)
  local out = {}
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    out[i] = type(v) .. ':' .. tostring(v)
  end
  return table.concat(out, ',')
end
local function gmatch_all(s, p, init)
  local out, n = {}, 0
  for a, b in string.gmatch(s, p, init) do
    n = n + 1
    out[n] = show(a, b)
    if n > 50 then break end
  end
  return table.concat(out, ';')
end
local lines = {}
for i, c in ipairs(cases) do
  local s, p, init, repl = c[1], c[2], c[3], c[4]
  lines[i] = table.concat({
    show(pcall(string.find, s, p)),
    show(pcall(string.find, s, p, init)),
    show(pcall(string.find, s, p, init, true)),
    show(pcall(string.match, s, p)),
    show(pcall(string.match, s, p, init)),
    show(pcall(gmatch_all, s, p)),
    show(pcall(gmatch_all, s, p, init)),
    show(pcall(string.gsub, s, p, repl)),
    show(pcall(string.gsub, s, p, repl, 1)),
    show(pcall(function() local a, b, c = string.find(s, p, init) return a, b, c end)),
    show(pcall(function() return (string.match(s, p)) end)),
    show(pcall(function() local r, n = string.gsub(s, p, repl) return r, n end)),
  }, ' | ')
end
return table.concat(lines, '\\030')`;

describe("the sandbox's matcher agrees with Lua 5.4's", () => {
  const chunk = conformanceChunk(buildCases(2000));
  let engine: LuaEngine;

  beforeAll(async () => {
    engine = await new LuaFactory().createEngine();
  });

  afterAll(() => engine.global.close());

  it('on 2,000 drawn subject/pattern pairs through find, match, gmatch and gsub', async () => {
    const expected = String(engine.doStringSync(chunk));
    const { checker, errors, dispose } = await createCheckerFromTree(
      {
        'rc/s3.services.k8s.aws/Bucket/health.lua': `return { status = "Healthy", message = (function() ${chunk} end)() }`,
      },
      { luaDirectories: ['rc'], lua: { instructionLimit: 1e9, memoryLimitMiB: 64, timeoutMs: 60_000 } },
    );
    try {
      expect(errors).toEqual([]);
      const result = checker.evaluate({ ...loadObject('bucket') });
      expect(result?.status).toBe('Current');
      // Errors carry the calling line: the same line, in chunks of different names.
      const lines = (text: string) => text.replace(/string:[^,|]*?:(\d+): /g, 'string:line $1: ').split('\x1e');
      const actualLines = lines(result?.message ?? '');
      const expectedLines = lines(expected);
      expect(actualLines).toHaveLength(2000);
      const differing = expectedLines.flatMap((line, i) =>
        line === actualLines[i] ? [] : [{ i, expected: line, actual: actualLines[i] }],
      );
      expect(differing.slice(0, 5)).toEqual([]);
    } finally {
      dispose();
    }
  });
});
