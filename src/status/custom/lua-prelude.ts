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
 * - Sandbox: libraries are read-only proxies created per evaluation whose `pairs` never hands out
 *   the library itself, so nothing a script does survives it; no `load`, `dofile`, `io`, `debug`,
 *   `package`, `string.dump`, `string.pack`; `os` has only `time` and `date`; `require` knows only
 *   "os" (Argo CD preloads a safe os module); finalizers (`__gc`) are refused because they could
 *   run outside the budget; once the evaluation is aborted `pcall`, `xpcall` and
 *   `coroutine.resume` raise ABORT again whatever error reached them, so neither they nor a
 *   `__close` handler can swallow it; library calls whose C work grows with an argument charge it
 *   to the budget (see lua-checked-calls.ts); without `useOpenLibs` strings have no methods, as
 *   in Argo CD.
 *
 * The chunk is called with the table lua-checked-calls returns and the host's `charge` function.
 */
export const LUA_PRELUDE = String.raw`
local checked, charge = ...
local string, table, math, os, coroutine = string, table, math, os, coroutine
local type, next, select, error, rawget = type, next, select, error, rawget
local native_tostring, native_setmetatable, tonumber = tostring, setmetatable, tonumber
local native_pcall, native_xpcall, native_resume = pcall, xpcall, coroutine.resume
local math_type, tointeger, floor, ceil = math.type, math.tointeger, math.floor, math.ceil
local native_format, find, native_concat, pack, unpack = string.format, string.find, table.concat, table.pack, table.unpack

-- A function, not a table: a script that catches it (as a __close handler's argument) cannot
-- store anything in it for the next evaluation to find.
local ABORT = function() end

local function gopher_tostring(v)
  if math_type(v) == 'float' then
    local i = tointeger(v)
    if i then return native_tostring(i) end
    return native_format('%.14g', v)
  end
  return native_tostring(v)
end

-- The conversion pattern cannot backtrack far (its last item matches any byte), so the native find
-- costs one step per byte of the format: charged once here, with the formatting itself.
local function gopher_format(fmt, ...)
  if type(fmt) == 'string' and #fmt > 64 then charge(#fmt) end
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

-- charge(0) raises ABORT again once the evaluation was aborted: the abort is sticky, so an error a
-- __close handler raises while ABORT unwinds (which replaces ABORT) cannot end it either.
local function rethrow(ok, ...)
  if not ok then charge(0) end
  return ok, ...
end

local function safe_pcall(f, ...)
  return rethrow(native_pcall(f, ...))
end

local function safe_xpcall(f, handler, ...)
  local function guarded(e)
    charge(0)
    return handler(e)
  end
  return rethrow(native_xpcall(f, guarded, ...))
end

local function safe_resume(co, ...)
  return rethrow(native_resume(co, ...))
end

local function safe_setmetatable(t, mt)
  if type(t) ~= 'table' then
    error("bad argument #1 to 'setmetatable' (table expected, got " .. type(t) .. ")", 2)
  end
  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then
    error('__gc metamethods are not allowed in health scripts', 2)
  end
  return native_setmetatable(t, mt)
end

-- Library functions whose C work grows with an argument charge it to the budget (lua-checked-calls).
-- string.pack/unpack/packsize are Lua 5.3 additions gopher-lua lacks; string.dump exposes bytecode.
string.find, string.match, string.gmatch, string.gsub = checked.find, checked.match, checked.gmatch, checked.gsub
string.rep, string.byte = checked.rep, checked.byte
string.upper, string.lower, string.reverse = checked.upper, checked.lower, checked.reverse
string.format = gopher_format
string.gfind = string.gmatch
string.dump, string.pack, string.unpack, string.packsize = nil, nil, nil, nil

-- Without useOpenLibs Argo CD has no string library at all, so s:upper() must fail there too.
local string_meta = getmetatable('')
string_meta.__metatable = false
local no_string_methods = {}

local libs = {
  string = string,
  table = {
    concat = gopher_concat, insert = checked.insert, remove = checked.remove, sort = checked.sort,
    unpack = checked.unpack, pack = pack, move = checked.move,
    getn = function(t) return #t end, maxn = maxn,
  },
  math = {},
  os = { time = os.time, date = checked.date },
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
-- The generator's state is shared by every evaluation: a seed one script sets is reset before the next.
local native_randomseed, reseed = math.randomseed, false
libs.math.randomseed = function(...) reseed = true return native_randomseed(...) end

local metas = {}
for name, lib in next, libs do
  metas[name] = {
    __index = lib,
    __newindex = function() error("attempt to modify read-only library '" .. name .. "'", 2) end,
    -- Iterating must not hand out lib itself (pairs returns its state), or a script could change
    -- the library every later evaluation sees.
    __pairs = function(proxy) return function(_, k) return next(lib, k) end, proxy, nil end,
    __metatable = false,
  }
end

local base = {
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
  pcall = safe_pcall, xpcall = safe_xpcall, rawequal = rawequal, rawget = rawget, rawset = rawset,
  rawlen = rawlen, select = select, setmetatable = safe_setmetatable, getmetatable = getmetatable,
  tonumber = checked.tonumber, tostring = gopher_tostring, type = type, unpack = checked.unpack,
  print = function() end, collectgarbage = function() return 0 end, _VERSION = 'Lua 5.1',
}

local function make_env(obj, open_libs)
  if reseed then
    native_randomseed()
    reseed = false
  end
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
