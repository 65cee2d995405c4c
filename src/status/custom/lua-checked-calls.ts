/** Calls estimated below this many instructions are not charged: they cost about what the call instruction itself does. */
export const FREE_COST = 64;

/**
 * What the host's `search` pushes after a match (nil when there is none): `find` the 1-based
 * start and end then the captures; `match` the captures, or the whole match when the pattern has
 * none; `iterate` start, end, then what `match` gives (gmatch, gsub with a function); `raw` start,
 * end, then the captures with an unfinished one as `false` (gsub with a string or table, where Lua
 * only complains about a capture it is asked for). In every mode a pattern error comes back as
 * `false, message`.
 */
export const SEARCH_MODE = { find: 0, match: 1, iterate: 2, raw: 3 } as const;

/**
 * Trusted Lua run once per Lua state, before the prelude: checked versions of the library
 * functions whose work inside one C call grows with an argument. The instruction hook cannot fire
 * inside C, so each of these estimates its work first and charges it to the instruction budget
 * through `charge(cost)` (a host function that aborts the evaluation once the budget is spent), so
 * a single call can never run longer than the budget allows, and a loop of calls spends the budget
 * as a loop of instructions does.
 *
 * Cost units, chosen so one unit takes about as long as one VM instruction: one per element moved,
 * pushed or repeated, one per pattern-matching step, one per 32 bytes compared or copied, a
 * thousand per `os.date` conversion.
 *
 * Pattern calls (find, match, gmatch, gsub) do not run Lua's C matcher at all: no estimate made
 * before a backtracking match can tell an ordinary pattern from a catastrophic one without
 * refusing some ordinary ones, so they run the host's `search` (lua-pattern.ts, Lua 5.4's matcher
 * ported to count its steps), which charges the steps it really took and aborts the evaluation
 * when the budget runs out mid-match. The loops of gmatch and gsub (and gsub's replacement) are
 * written here in Lua following lstrlib.c, so a function or table replacement runs as script code
 * under the hook. A plain `find` still uses the C search, charged by its worst case.
 *
 * `table.insert` and `table.remove` are written in Lua: their C versions shift `#t` elements where
 * `#t` comes from a script's `__len`, which no estimate made beforehand can trust; for the same
 * reason `table.sort` refuses a table with a metatable.
 */
export const LUA_CHECKED_CALLS = String.raw`
local charge, search = ...
local type, select, error, tostring, tonumber, getmetatable, rawlen = type, select, error, tostring, tonumber, getmetatable, rawlen
local string, table, math = string, table, math
local find, match, gmatch, gsub = string.find, string.match, string.gmatch, string.gsub
local sub, byte, format = string.sub, string.byte, string.format
local native_rep, native_byte = string.rep, string.byte
local native_move, native_unpack, native_sort, concat, pack = table.move, table.unpack, table.sort, table.concat, table.pack
local tointeger, log, floor = math.tointeger, math.log, math.floor
local FREE_COST = ${FREE_COST}
local FIND, MATCH, ITERATE, RAW = ${SEARCH_MODE.find}, ${SEARCH_MODE.match}, ${SEARCH_MODE.iterate}, ${SEARCH_MODE.raw}

local function spend(cost)
  if cost > FREE_COST then charge(cost) end
end

-- The string a string argument becomes in C (numbers convert), or nil for other types.
local function as_string(v)
  local t = type(v)
  if t == 'string' then return v end
  if t == 'number' then return tostring(v) end
  return nil
end

-- luaL_optinteger: the integer an optional argument becomes, or nil where C raises an error.
local function opt_integer(v, default)
  if v == nil then return default end
  if type(v) == 'string' then v = tonumber(v) end
  if type(v) ~= 'number' then return nil end
  return tointeger(v)
end

-- lstrlib's posrelatI: a 1-based start position, negative counting from the end.
local function start_position(pos, len)
  if pos > 0 then return pos end
  if pos == 0 or pos < -len then return 1 end
  return len + pos + 1
end

-- The arguments every pattern call shares, or nil when the C function would reject them before
-- matching anything (the caller then calls it, so the script sees Lua's own argument error).
local function pattern_args(s, p, init)
  local text, pat, start = as_string(s), as_string(p), opt_integer(init, 1)
  if not text or not pat or not start then return nil end
  return text, pat, start_position(start, #text) - 1
end


local checked = {}

-- Called in tail position, so level 2 is the script line that called the library function: Lua
-- reports a C function's errors there.
local function checked_result(first, ...)
  if first == false then error((...), 2) end
  return first, ...
end

function checked.find(s, p, init, plain)
  local text, pat, start = pattern_args(s, p, init)
  if not text then return find(s, p, init, plain) end
  if start > #text then return nil end
  spend(#pat // 32)
  if plain or not find(pat, '[%^%$%*%+%?%.%(%[%%%-]') then
    spend((#text - start + 1.0) * (#pat + 1) // 32)
    return find(text, pat, start + 1, true)
  end
  return checked_result(search(text, pat, start, -1, FIND, true, 'string.find'))
end

function checked.match(s, p, init)
  local text, pat, start = pattern_args(s, p, init)
  if not text then return match(s, p, init) end
  if start > #text then return nil end
  return checked_result(search(text, pat, start, -1, MATCH, true, 'string.match'))
end

-- Lua 5.4's gmatch_aux: '^' is no anchor, and an empty match where the last one ended is skipped.
function checked.gmatch(s, p, init)
  local text, pat, start = pattern_args(s, p, init)
  if not text then return gmatch(s, p, init) end
  local src, last_match = start, -1
  local function advance(first, last, ...)
    if first == nil then return nil end
    if first == false then error(last, 2) end
    src, last_match = last, last
    return ...
  end
  return function()
    return advance(search(text, pat, src, last_match, ITERATE, false, 'string.gmatch'))
  end
end

-- Lua 5.4's add_s: %0-%9 and %% in a replacement string; r holds start, end, then the captures.
local function expand(repl, text, r)
  local parts, k, pos = {}, 0, 1
  while true do
    local i = find(repl, '%', pos, true)
    if not i then break end
    k = k + 1
    parts[k] = sub(repl, pos, i - 1)
    local d = byte(repl, i + 1)
    local value
    if d == 37 then
      value = '%'
    elseif d == 48 then
      value = sub(text, r[1], r[2])
    elseif d and d > 48 and d <= 57 then
      local index = d - 48
      if index <= r.n - 2 then
        value = r[index + 2]
        if value == false then error('unfinished capture', 3) end
        value = tostring(value)
      elseif index == 1 then
        value = sub(text, r[1], r[2])
      else
        error(format('invalid capture index %%%d', index), 3)
      end
    else
      error("invalid use of '%' in replacement string", 3)
    end
    k = k + 1
    parts[k] = value
    pos = i + 2
  end
  if k == 0 then return repl end
  parts[k + 1] = sub(repl, pos)
  return concat(parts)
end

-- Lua 5.4's str_gsub and add_value.
function checked.gsub(s, p, repl, n)
  local text, pat = as_string(s), as_string(p)
  local tr = type(repl)
  local max_n = opt_integer(n, text and #text + 1)
  if not text or not pat or not max_n or (tr ~= 'string' and tr ~= 'number' and tr ~= 'function' and tr ~= 'table') then
    return gsub(s, p, repl, n)
  end
  local repl_text = as_string(repl)
  local mode = tr == 'function' and ITERATE or RAW
  local anchored = byte(pat, 1) == 94
  local parts, k, count, src, last_match, changed = {}, 0, 0, 0, -1, false
  while count < max_n do
    local r = pack(search(text, pat, src, last_match, mode, true, 'string.gsub'))
    local first, last = r[1], r[2]
    if first == nil then break end
    if first == false then error(last, 2) end
    count = count + 1
    if first > src + 1 then
      k = k + 1
      parts[k] = sub(text, src + 1, first - 1)
    end
    local value
    if repl_text then
      value = expand(repl_text, text, r)
    else
      if tr == 'function' then
        value = repl(native_unpack(r, 3, r.n))
      else
        local key = r[3]
        if r.n < 3 then key = sub(text, first, last) end
        if key == false then error('unfinished capture', 2) end
        value = repl[key]
      end
      if not value then
        value = sub(text, first, last)
      elseif type(value) == 'string' or type(value) == 'number' then
        value = tostring(value)
        changed = true
      else
        error('invalid replacement value (a ' .. type(value) .. ')', 2)
      end
    end
    if repl_text then changed = true end
    k = k + 1
    parts[k] = value
    src, last_match = last, last
    if anchored then break end
  end
  if not changed then return s, count end
  parts[k + 1] = sub(text, src + 1)
  return concat(parts), count
end

-- Lua loops once per repetition even when nothing is copied (rep("", 1e8)).
function checked.rep(s, n, sep, ...)
  local text, count = as_string(s), tonumber(n)
  if text and count and count > 0 then
    local sep_text = as_string(sep) or ''
    spend(count + count * (#text + #sep_text) // 32)
  end
  return native_rep(s, n, sep, ...)
end

-- Each copies or scans the whole subject; a loop of them on a long string adds up.
local native_upper, native_lower, native_reverse = string.upper, string.lower, string.reverse
function checked.upper(s, ...)
  local text = as_string(s)
  if text then spend(#text // 32) end
  return native_upper(s, ...)
end
function checked.lower(s, ...)
  local text = as_string(s)
  if text then spend(#text // 32) end
  return native_lower(s, ...)
end
function checked.reverse(s, ...)
  local text = as_string(s)
  if text then spend(#text // 32) end
  return native_reverse(s, ...)
end

function checked.byte(s, i, j, ...)
  local text = as_string(s)
  if text and j ~= nil then spend(#text) end
  return native_byte(s, i, j, ...)
end

-- C loops over the whole range even when both tables are empty.
function checked.move(a1, f, e, t, a2)
  local first, last = tonumber(f), tonumber(e)
  if first and last and last >= first then spend(last + 0.0 - first + 1) end
  return native_move(a1, f, e, t, a2)
end

function checked.unpack(list, i, j)
  i = i or 1
  if j == nil then j = #list end
  local first, last = tonumber(i), tonumber(j)
  if first and last and last >= first then spend(last + 0.0 - first + 1) end
  return native_unpack(list, i, j)
end

-- A metatable's __len would give the C sort a length the estimate cannot trust.
function checked.sort(list, comp)
  if type(list) == 'table' and getmetatable(list) ~= nil then
    error("bad argument #1 to 'sort' (a table with a metatable cannot be sorted in a health script)", 2)
  end
  if type(list) == 'table' then
    local n = rawlen(list)
    if n > 1 then spend(n * (floor(log(n, 2)) + 1)) end
  end
  return native_sort(list, comp)
end

local function check_position(pos, arg)
  local n = tointeger(pos)
  if n == nil then
    error(format("bad argument #%d (number has no integer representation)", arg), 3)
  end
  return n
end

function checked.insert(list, ...)
  local count = select('#', ...)
  local e = #list + 1
  if count == 1 then
    list[e] = ...
    return
  end
  if count ~= 2 then error("wrong number of arguments to 'insert'", 2) end
  local pos, value = ...
  pos = check_position(pos, 2)
  if pos < 1 or pos > e then error("bad argument #2 to 'insert' (position out of bounds)", 2) end
  for k = e, pos + 1, -1 do list[k] = list[k - 1] end
  list[pos] = value
end

function checked.remove(list, pos)
  local size = #list
  if pos == nil then pos = size else pos = check_position(pos, 2) end
  if pos ~= size and (pos < 1 or pos > size + 1) then
    error("bad argument #2 to 'remove' (position out of bounds)", 2)
  end
  local value = list[pos]
  while pos < size do
    list[pos] = list[pos + 1]
    pos = pos + 1
  end
  list[pos] = nil
  return value
end

-- strftime runs once per conversion of a format of any length, and one conversion costs about as
-- much as a thousand VM instructions.
local native_date = os.date
function checked.date(fmt, ...)
  if type(fmt) == 'string' and #fmt > 2 then
    spend(#fmt // 32 + 1000 * select(2, gsub(fmt, '%%', '')))
  end
  return native_date(fmt, ...)
end

-- Converting a long numeral scans every byte in C.
function checked.tonumber(v, ...)
  if type(v) == 'string' then spend(#v) end
  return tonumber(v, ...)
end

return checked
`;
