/**
 * Trusted Lua run once per Lua state, with every standard library open. It makes Lua 5.4 behave
 * like gopher-lua (Lua 5.1, numbers are float64), which Argo CD runs health scripts in, and returns
 * `make_env(obj, open_libs)` (a fresh global table per evaluation) plus the ABORT sentinel the
 * instruction hook raises.
 *
 * Why each piece exists:
 * - gopher-lua prints integral numbers without ".0": `tostring`, `%s` in `string.format` and
 *   `table.concat` render integral floats as integers (the `..` operator cannot be changed).
 * - Library functions that return floats (math.pow, sqrt, log, exp) return integers when the
 *   result is integral, so `"x" .. math.pow(2, 3)` reads "x8" as in gopher-lua.
 * - gopher-lua's `%d` truncates non-integers; Lua 5.4 raises "number has no integer representation".
 * - Lua 5.1 names scripts still use: `table.getn`, `table.maxn`, `unpack`, `math.pow`, `math.mod`,
 *   `math.log10`, `string.gfind`.
 * - Sandbox: libraries are read-only proxies created per evaluation, so nothing a script does
 *   survives it; no `load`, `dofile`, `io`, `debug`, `package`; `os` has only `time` and `date`;
 *   `require` knows only "os" (Argo CD preloads a safe os module); finalizers (`__gc`) are refused
 *   because they could run outside the budget; `pcall`, `xpcall` and `coroutine.resume` cannot
 *   swallow ABORT; pattern calls whose backtracking could run for minutes inside one C call
 *   (n^k steps for k repeated wildcards over n bytes) are refused, since the hook cannot
 *   interrupt them;
 *   without `useOpenLibs` strings have no methods, as in Argo CD.
 */
export const LUA_PRELUDE = String.raw`
local string, table, math, os, coroutine = string, table, math, os, coroutine
local type, next, select, error, rawget = type, next, select, error, rawget
local native_tostring, native_setmetatable, tonumber = tostring, setmetatable, tonumber
local native_pcall, native_xpcall, native_resume = pcall, xpcall, coroutine.resume
local math_type, tointeger, floor, ceil = math.type, math.tointeger, math.floor, math.ceil
local native_format, find, native_concat, pack, unpack = string.format, string.find, table.concat, table.pack, table.unpack

local ABORT = native_setmetatable({}, { __tostring = function() return 'health check aborted' end, __metatable = false })

local function gopher_tostring(v)
  if math_type(v) == 'float' then
    local i = tointeger(v)
    if i then return native_tostring(i) end
    return native_format('%.14g', v)
  end
  return native_tostring(v)
end

local function gopher_format(fmt, ...)
  local n = select('#', ...)
  if n == 0 or type(fmt) ~= 'string' then return native_format(fmt, ...) end
  local args = pack(...)
  local pos, index = 1, 0
  while true do
    local s, e, conv = find(fmt, '%%[-+ #0]*%d*%.?%d*(.)', pos)
    if not s then break end
    pos = e + 1
    if conv ~= '%' then
      index = index + 1
      local v = args[index]
      if conv == 'd' or conv == 'i' or conv == 'x' or conv == 'X' or conv == 'o' or conv == 'c' then
        if type(v) == 'string' then v = tonumber(v) or v end
        if math_type(v) == 'float' then
          if v >= 0 then args[index] = floor(v) else args[index] = ceil(v) end
        end
      elseif conv == 's' and math_type(v) == 'float' then
        args[index] = gopher_tostring(v)
      end
    end
  end
  return native_format(fmt, unpack(args, 1, n))
end

local function gopher_concat(list, sep, i, j)
  i = i or 1
  j = j or #list
  for k = i, j do
    if math_type(list[k]) == 'float' then
      local copy = {}
      for m = i, j do
        local v = list[m]
        if math_type(v) == 'float' then v = gopher_tostring(v) end
        copy[m - i + 1] = v
      end
      return native_concat(copy, sep)
    end
  end
  return native_concat(list, sep, i, j)
end

local function maxn(t)
  local max = 0
  for k in next, t do
    if type(k) == 'number' and k > max then max = k end
  end
  return max
end

local function rethrow(ok, ...)
  if not ok and (...) == ABORT then error(ABORT, 0) end
  return ok, ...
end

local function safe_pcall(f, ...)
  return rethrow(native_pcall(f, ...))
end

local function safe_xpcall(f, handler, ...)
  local function guarded(e)
    if e == ABORT then return ABORT end
    return handler(e)
  end
  return rethrow(native_xpcall(f, guarded, ...))
end

local function safe_resume(co, ...)
  return rethrow(native_resume(co, ...))
end

local function safe_setmetatable(t, mt)
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then
    error('__gc metamethods are not allowed in health scripts', 2)
  end
  return native_setmetatable(t, mt)
end

-- Lua patterns backtrack: k repeated wildcards ('.' or a '[set]' followed by *, + or -) over an
-- n-byte subject cost up to n^k steps (one more factor n when the pattern is not anchored with ^)
-- inside one C call, which no instruction hook can interrupt. Refuse the call when that bound
-- passes ~1e8 steps (about a second). Quantified classes such as %d+ stop at the next literal and
-- are not counted, so ordinary patterns on long messages still run.
local log = math.log
local PATTERN_COST_LIMIT = log(1e8)
local native_find, native_match, native_gmatch, native_gsub = string.find, string.match, string.gmatch, string.gsub
local function check_pattern(s, pattern, plain)
  if plain or type(s) ~= 'string' or type(pattern) ~= 'string' or #s < 64 then return end
  local wildcards = select(2, native_gsub(native_gsub(pattern, '%%.', 'e'), '[%.%]][%*%+%-]', ''))
  local exponent = wildcards
  if native_find(pattern, '^', 1, true) ~= 1 then exponent = exponent + 1 end
  if exponent > 1 and exponent * log(#s) > PATTERN_COST_LIMIT then
    error(native_format('pattern too complex for a %d-byte subject (%d repeated wildcards)', #s, wildcards), 3)
  end
end
string.find = function(s, pattern, init, plain) check_pattern(s, pattern, plain) return native_find(s, pattern, init, plain) end
string.match = function(s, pattern, init) check_pattern(s, pattern) return native_match(s, pattern, init) end
string.gmatch = function(s, pattern) check_pattern(s, pattern) return native_gmatch(s, pattern) end
string.gsub = function(s, pattern, repl, n) check_pattern(s, pattern) return native_gsub(s, pattern, repl, n) end
string.format = gopher_format
string.gfind = string.gmatch
string.dump = nil

-- Without useOpenLibs Argo CD has no string library at all, so s:upper() must fail there too.
local string_meta = getmetatable('')
string_meta.__metatable = false
local no_string_methods = {}

local libs = {
  string = string,
  table = {
    concat = gopher_concat, insert = table.insert, remove = table.remove, sort = table.sort,
    unpack = unpack, pack = pack, move = table.move,
    getn = function(t) return #t end, maxn = maxn,
  },
  math = {},
  os = { time = os.time, date = os.date },
  coroutine = {
    create = coroutine.create, resume = safe_resume, running = coroutine.running,
    status = coroutine.status, wrap = coroutine.wrap, yield = coroutine.yield,
    isyieldable = coroutine.isyieldable,
  },
}
local function integral(v)
  if math_type(v) == 'float' then return tointeger(v) or v end
  return v
end
for k, v in next, math do libs.math[k] = v end
libs.math.pow = function(x, y) return integral(x ^ y) end
libs.math.sqrt = function(x) return integral(math.sqrt(x)) end
libs.math.exp = function(x) return integral(math.exp(x)) end
libs.math.log = function(x, base) return integral(math.log(x, base)) end
libs.math.log10 = function(x) return integral(math.log(x, 10)) end
libs.math.ldexp = function(m, e) return integral(m * 2.0 ^ e) end
libs.math.mod = math.fmod

local metas = {}
for name, lib in next, libs do
  metas[name] = {
    __index = lib,
    __newindex = function() error("attempt to modify read-only library '" .. name .. "'", 2) end,
    __pairs = function() return next, lib, nil end,
    __metatable = false,
  }
end

local base = {
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
  pcall = safe_pcall, xpcall = safe_xpcall, rawequal = rawequal, rawget = rawget, rawset = rawset,
  rawlen = rawlen, select = select, setmetatable = safe_setmetatable, getmetatable = getmetatable,
  tonumber = tonumber, tostring = gopher_tostring, type = type, unpack = unpack,
  print = function() end, collectgarbage = function() return 0 end, _VERSION = 'Lua 5.1',
}

local function make_env(obj, open_libs)
  local env = {}
  for k, v in next, base do env[k] = v end
  env._G = env
  env.obj = obj
  env.table = native_setmetatable({}, metas.table)
  env.os = native_setmetatable({}, metas.os)
  local os_proxy = env.os
  env.require = function(name)
    if name == 'os' then return os_proxy end
    error("module '" .. native_tostring(name) .. "' not found", 2)
  end
  string_meta.__index = open_libs and string or no_string_methods
  if open_libs then
    env.string = native_setmetatable({}, metas.string)
    env.math = native_setmetatable({}, metas.math)
    env.coroutine = native_setmetatable({}, metas.coroutine)
  end
  return env
end

return make_env, ABORT
`;
