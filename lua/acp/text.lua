--- Text helpers of the renderers: agent values shown on one line, lines of
--- a string, text for statuslines and winbars.
local M = {}

--- v as one line of text: newlines become a visible mark, non-strings are
--- shown with tostring (agents send all sorts).
---@param v any
---@return string
function M.one_line(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return (tostring(v):gsub("\r?\n", " ⏎ "))
end

--- The lines of text ("\n" separated; a trailing newline gives a last "").
---@param text string
---@return string[]
function M.split(text)
  -- (vim.split is several times slower; streamed text goes through here)
  local out, n, i = {}, 0, 1
  while true do
    local j = text:find("\n", i, true)
    n = n + 1
    if not j then
      out[n] = text:sub(i)
      return out
    end
    out[n] = text:sub(i, j - 1)
    i = j + 1
  end
end

-- Invisible or reordering characters: C1 controls, zero-width and bidi
-- marks, the BOM, soft hyphen, line/paragraph separators, Unicode tags;
-- each pattern with the bytes all its characters start with.
local invisible = {
  { "\194", "\194[\128-\159\173]" }, -- C1 controls, soft hyphen
  { "\216\156", "\216\156" }, -- U+061C arabic letter mark
  { "\225\160\142", "\225\160\142" }, -- U+180E mongolian vowel separator
  { "\226\128", "\226\128[\139-\143\168-\174]" }, -- U+200B-200F, U+2028-202E
  { "\226\129", "\226\129[\160-\164\166-\169]" }, -- U+2060-2064, U+2066-2069
  { "\239\187\191", "\239\187\191" }, -- U+FEFF
  { "\239\191", "\239\191[\185-\187]" }, -- U+FFF9-FFFB
  { "\243\160", "\243\160[\128\129][\128-\191]" }, -- U+E0000-E007F tags
}

-- Bytes that start every character visible rewrites (a quick test that
-- most text passes untouched).
local suspect = "[%z\1-\8\10-\31\127\194\216\225\226\239\243]"

local function picture(c)
  return vim.fn.nr2char(0x2400 + c:byte())
end

local function codepoint(c)
  return ("⟨U+%04X⟩"):format(vim.fn.char2nr(c, true))
end

--- s with every character that would hide or rewrite text made visible:
--- C0 controls (but tab) as their control pictures (ESC as "␛", CR as "␍",
--- LF as "␊"), DEL as "␡", and invisible or bidi characters as "⟨U+202E⟩".
--- Text without them costs one scan (chat lines may be megabytes long):
--- each rewrite runs only where its first bytes occur (a plain search).
---@param s string
---@return string
function M.visible(s)
  if not s:find(suspect) then
    return s
  end
  if s:find("[%z\1-\8\10-\31]") then
    s = s:gsub("[%z\1-\8\10-\31]", picture)
  end
  if s:find("\127", 1, true) then
    s = s:gsub("\127", "␡")
  end
  for _, p in ipairs(invisible) do
    if s:find(p[1], 1, true) then
      s = s:gsub(p[2], codepoint)
    end
  end
  return s
end

--- v as a label on one line (a title, a name, a mode): newlines shown as
--- " ⏎ ", hiding characters made visible (see visible), at most max
--- characters (default 80), cut with "…"; "" for nil. Its cost is bounded
--- by max whatever v's length (an agent's title may be megabytes): the
--- bytes past what max characters can take are dropped first.
---@param v any
---@param max integer|nil
---@return string
function M.label(v, max)
  if v == nil or v == vim.NIL then
    return ""
  end
  max = math.max(1, max or 80)
  local s = tostring(v)
  local cap = 4 * max + 8 -- a character takes at most 4 bytes
  if #s > cap then
    s = s:sub(1, cap) -- possibly ending in a cut character: cut off below
  end
  s = M.visible(M.one_line(s))
  if vim.fn.strchars(s) > max then
    s = vim.fn.strcharpart(s, 0, max - 1) .. "…"
  end
  return s
end

--- Runs of more blank characters than this in one line are shown as a count.
local max_blank_run = 64

--- The lines of text as a prompt shows them: each made visible (see
--- visible), a run of three or more blank lines as one "… N blank lines …"
--- line, and a run of over 64 blanks within a line as "… N blanks …", so
--- nothing can be pushed out of sight.
---@param text string
---@return string[]
function M.visible_lines(text)
  local out = {}
  local blank = 0
  local function flush()
    if blank >= 3 then
      out[#out + 1] = ("… %d blank lines …"):format(blank)
    else
      for _ = 1, blank do
        out[#out + 1] = ""
      end
    end
    blank = 0
  end
  for _, l in ipairs(vim.split((text:gsub("\r?\n$", "")), "\r?\n")) do
    if l:find("^%s*$") then
      blank = blank + 1
    else
      flush()
      l = l:gsub("[ \t]+", function(run)
        return #run > max_blank_run and (" … %d blanks … "):format(#run) or run
      end)
      out[#out + 1] = M.visible(l)
    end
  end
  flush()
  return out
end

--- A Vim regex matching the marks visible and visible_lines insert (for
--- highlighting them with matchadd()).
M.visible_marks = [[[\u2400-\u2421]\|⟨U+\x\+⟩\|… \d\+ blank\%(s\| lines\) …]]

--- v on one line with "%" doubled, for 'winbar' and 'statusline'.
---@param v any
---@return string
function M.statusline(v)
  return (M.one_line(v):gsub("%%", "%%%%"))
end

--- A session's name: the agent's title of the conversation
--- (s.session_title), else its first prompt, else its saved chat's title;
--- one line of at most max characters (default 40, see label), nil before
--- any of them.
---@param s { session_title: string|nil, first_prompt: string|nil, history: table|nil }
---@param max integer|nil
---@return string|nil
function M.session_name(s, max)
  local name = s.session_title or s.first_prompt or (type(s.history) == "table" and s.history.title or nil)
  local first = type(name) == "string" and name:find("%S")
  if not first then
    return nil
  end
  max = max or 40
  -- What max characters can show, once blank runs are one space.
  name = name:sub(first, first + 16 * max):gsub("%s+", " ")
  return M.label(vim.trim(name), max)
end

--- An ISO 8601 time ("2026-11-22T10:00:00Z", "...+02:00") as the other
--- dates of the plugin show ("2026-11-22 11:00", local time); v itself when
--- it is not one.
---@param v any
---@return string
function M.date(v)
  if type(v) ~= "string" then
    return tostring(v or "")
  end
  local y, mo, d, h, mi, sec, rest = v:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)[T ](%d%d):(%d%d):?(%d?%d?)(.*)$")
  if not y then
    return v
  end
  local t = {
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(sec) or 0,
  }
  local zone = rest:gsub("^%.%d+", "")
  local off -- seconds east of UTC; nil: local time already
  if zone == "Z" then
    off = 0
  else
    local sign, zh, zm = zone:match("^([+-])(%d%d):?(%d%d)$")
    if sign then
      off = (tonumber(zh) * 3600 + tonumber(zm) * 60) * (sign == "-" and -1 or 1)
    end
  end
  local stamp = os.time(t) -- t read as local time
  if off then
    local now = os.time()
    local utc_as_local = os.time(os.date("!*t", now))
    stamp = stamp + (now - utc_as_local) - off
  end
  return os.date("%Y-%m-%d %H:%M", stamp)
end

return M
