/** Calls estimated below this many instructions are not charged: they cost about what the call instruction itself does. */
export const FREE_COST = 64;

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
 * Pattern calls (find, match, gmatch, gsub) bound the backtracking of Lua's matcher from the
 * pattern and the actual subject: a quantified item (`*`, `+`, `-`) over a class tries at most
 * r + 1 lengths, r being the longest run of subject bytes that class matches, for each way the rest
 * of the pattern can match; `?` tries two; `%b` and back-references scan at most the subject.
 * Unanchored calls multiply by the start positions where the first item can match. The bound is
 * tight for hostile cases (`("a"):rep(400):find("a-a-a-b")`) and small for ordinary ones (`%d+`
 * over a message with short digit runs), so ordinary patterns on long messages keep working while
 * a pattern whose bound exceeds the whole instruction budget is refused before it starts.
 *
 * `table.insert` and `table.remove` are written in Lua: their C versions shift `#t` elements where
 * `#t` comes from a script's `__len`, which no estimate made beforehand can trust; for the same
 * reason `table.sort` refuses a table with a metatable.
 */
export const LUA_CHECKED_CALLS = String.raw`
local charge, instruction_limit = ...
local type, select, error, tostring, tonumber, getmetatable, rawlen = type, select, error, tostring, tonumber, getmetatable, rawlen
local string, table, math = string, table, math
local find, match, gmatch, gsub, sub, format = string.find, string.match, string.gmatch, string.gsub, string.sub, string.format
local native_rep, native_byte = string.rep, string.byte
local native_move, native_unpack, native_sort = table.move, table.unpack, table.sort
local tointeger, log, floor = math.tointeger, math.log, math.floor
local FREE_COST = ${FREE_COST}

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

-- Index just past the single-character class starting at i (lstrlib's classEnd), or nil and
-- Lua's own complaint when malformed.
local function class_end(p, i)
  local c = sub(p, i, i)
  if c == '%' then
    if i >= #p then return nil, "malformed pattern (ends with '%')" end
    return i + 2
  elseif c == '[' then
    local j = i + 1
    if sub(p, j, j) == '^' then j = j + 1 end
    repeat
      if j > #p then return nil, "malformed pattern (missing ']')" end
      local cc = sub(p, j, j)
      j = j + 1
      if cc == '%' and j <= #p then j = j + 1 end
    until sub(p, j, j) == ']'
    return j + 1
  end
  return i + 1
end

-- A pattern matching a maximal run of the class (nil for '.', which matches every byte).
local function run_pattern(class)
  if class == '.' then return nil end
  if #class == 1 and not find(class, '^%w') then return '%' .. class .. '+' end
  return class .. '+'
end

-- Splits a pattern into the items that decide the matcher's work. items.first is the index of
-- the first item when it must consume a byte of its class (so only such bytes can start a match).
local function parse_pattern(p, anchor_allowed)
  local items, i, m = {}, 1, #p
  local anchored = anchor_allowed and sub(p, 1, 1) == '^'
  if anchored then i = 2 end
  while i <= m do
    local c = sub(p, i, i)
    local nextc = sub(p, i + 1, i + 1)
    if c == '(' or c == ')' then
      items[#items + 1] = { kind = 'step' }
      i = i + 1
    elseif c == '$' and i == m then
      i = i + 1
    elseif c == '%' and nextc == 'b' then
      if i + 3 > m then return nil, "malformed pattern (missing arguments to '%b')" end
      items[#items + 1] = { kind = 'scan' }
      i = i + 4
    elseif c == '%' and nextc == 'f' then
      if sub(p, i + 2, i + 2) ~= '[' then return nil, "missing '[' after '%f' in pattern" end
      local e, complaint = class_end(p, i + 2)
      if not e then return nil, complaint end
      items[#items + 1] = { kind = 'step' }
      i = e
    elseif c == '%' and find(nextc, '^%d') then
      items[#items + 1] = { kind = 'scan' }
      i = i + 2
    else
      local e, complaint = class_end(p, i)
      if not e then return nil, complaint end
      local run, q = run_pattern(sub(p, i, e - 1)), sub(p, e, e)
      if q == '*' or q == '+' or q == '-' then
        items[#items + 1] = { kind = 'repeat', run = run, plus = q == '+' }
        i = e + 1
      elseif q == '?' then
        items[#items + 1] = { kind = 'optional' }
        i = e + 1
      else
        items[#items + 1] = { kind = 'one', run = run }
        i = e
      end
    end
  end
  for k = 1, #items do
    local item = items[k]
    if item.kind ~= 'step' then
      if item.kind == 'one' or (item.kind == 'repeat' and item.plus) then items.first = k end
      break
    end
  end
  return items, anchored
end

-- Longest run and total count of subject bytes the class matches: one charged pass over s,
-- without building strings.
local function class_stats(s, run)
  local n = #s
  if run == nil then return n, n end
  spend(n // 32)
  local longest, total, pos = 0, 0, 1
  while true do
    local i, j = find(s, run, pos)
    if not i then break end
    local len = j - i + 1
    total = total + len
    if len > longest then longest = len end
    pos = j + 1
  end
  return longest, total
end

-- Upper bound of the matcher's steps for the items over s; with exact = false every class is
-- assumed to match the whole subject (no pass over s).
local function pattern_bound(s, items, anchored, exact)
  local n = #s
  local w = 1.0
  for k = #items, 1, -1 do
    local item = items[k]
    local kind = item.kind
    if kind == 'step' or kind == 'one' then
      w = w + 1
    elseif kind == 'scan' then
      w = w + n + 1
    elseif kind == 'optional' then
      w = 2 * w + 1
    else
      local r = n
      if exact then r = class_stats(s, item.run) end
      w = (r + 1) * w + r + 1
    end
  end
  if anchored then return w end
  local starts = n + 1.0
  if exact and items.first then
    local _, total = class_stats(s, items[items.first].run)
    starts = total + 1.0
  end
  return starts * w + n + 1
end

-- Parsed patterns by anchoring and text; cleared when full so script-made patterns cannot grow it.
local parsed, parsed_count = { [true] = {}, [false] = {} }, 0
local function parse_cached(p, anchor_allowed)
  local hit = parsed[anchor_allowed][p]
  if hit then return hit[1], hit[2] end
  local items, anchored = parse_pattern(p, anchor_allowed)
  if not items then return nil, anchored end
  if parsed_count >= 256 then parsed, parsed_count = { [true] = {}, [false] = {} }, 0 end
  parsed[anchor_allowed][p] = { items, anchored }
  parsed_count = parsed_count + 1
  return items, anchored
end

local function check_pattern(what, s, p, anchor_allowed, plain)
  s, p = as_string(s), as_string(p)
  if not s or not p then return end
  if plain or not find(p, '[%^%$%*%+%?%.%(%[%%%-]') then
    spend((#s + 1.0) * (#p + 1) // 32)
    return
  end
  local items, anchored_or_complaint = parse_cached(p, anchor_allowed)
  if not items then error(anchored_or_complaint, 3) end
  local anchored = anchored_or_complaint
  local bound = pattern_bound(s, items, anchored, false)
  if bound <= FREE_COST then return end
  bound = pattern_bound(s, items, anchored, true)
  if bound > instruction_limit then
    error(format('pattern too complex for a %d-byte subject in %s (up to %.3g matching steps, the instruction limit is %d)',
      #s, what, bound, instruction_limit), 3)
  end
  spend(bound)
end

local checked = {}

function checked.find(s, p, init, plain, ...)
  check_pattern('string.find', s, p, true, plain)
  return find(s, p, init, plain, ...)
end
function checked.match(s, p, ...)
  check_pattern('string.match', s, p, true, false)
  return match(s, p, ...)
end
function checked.gmatch(s, p, ...)
  check_pattern('string.gmatch', s, p, false, false)
  return gmatch(s, p, ...)
end
function checked.gsub(s, p, ...)
  check_pattern('string.gsub', s, p, true, false)
  return gsub(s, p, ...)
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
