--- Markdown of one line at a time, as the chat draws it: the spans
--- (highlight group, concealed or not) of a prose line, and the fences
--- that open and close code blocks. Pure functions of the line: the chat
--- asks for the lines on screen only, so drawing never depends on the
--- length of the transcript.
local M = {}

---@class acp.Span
---@field [1] integer first byte (0-based)
---@field [2] integer end byte (exclusive)
---@field [3] string|nil highlight group
---@field [4] string|nil conceal ("" hides the bytes)

--- Highlight groups of markdown (see acp.highlights for their links).
M.groups = {
  heading = { "AcpMdH1", "AcpMdH2", "AcpMdH3", "AcpMdH4", "AcpMdH5", "AcpMdH6" },
  strong = "AcpMdStrong",
  emphasis = "AcpMdEmphasis",
  strike = "AcpMdStrike",
  code = "AcpMdCode",
  code_block = "AcpMdCodeBlock",
  fence = "AcpMdFence",
  lang = "AcpMdLang",
  link = "AcpMdLink",
  url = "AcpMdUrl",
  list = "AcpMdListMarker",
  task = "AcpMdTask",
  task_done = "AcpMdTaskDone",
  quote = "AcpMdQuote",
  rule = "AcpMdRule",
  pipe = "AcpMdTablePipe",
  escape = "AcpMdEscape",
}
local G = M.groups

---@class acp.Fence
---@field char string "`" or "~"
---@field len integer length of the opening run
---@field indent integer spaces before it
---@field info string the info string ("lua", "python title=x", "")
---@field lang string|nil its first word

--- The fence a line opens, if it is an opening fence ("```lua", "~~~").
---@param line string
---@return acp.Fence|nil
function M.fence_open(line)
  local indent, run, info = line:match("^( *)(```+)%s*([^`]*)$")
  if not run then
    indent, run, info = line:match("^( *)(~~~+)%s*(.*)$")
  end
  if not run then
    return nil
  end
  info = vim.trim(info)
  -- "{.lua}", "lua {title=x}", "python title=x"
  local lang = info:match("^[{.]*([%w_+#%-]+)")
  return { char = run:sub(1, 1), len = #run, indent = #indent, info = info, lang = lang }
end

--- Whether line closes fence f.
---@param line string
---@param f acp.Fence
---@return boolean
function M.fence_close(line, f)
  local run = line:match("^ *([`~]+)%s*$")
  return run ~= nil
    and run:sub(1, 1) == f.char
    and #run >= f.len
    and not run:find(f.char == "`" and "~" or "`", 1, true)
end

--- Spans of a fence line: the delimiters dimmed, the language labelled.
---@param line string
---@return acp.Span[]
function M.fence_spans(line)
  local s, e = line:find("^ *[`~]+")
  local spans = { { s - 1 + #line:match("^ *"), e, G.fence } }
  local ls, le = line:find("%S+", e + 1)
  if ls then
    spans[#spans + 1] = { ls - 1, le, G.lang }
  end
  return spans
end

local punct = "[%p]"

local function is_space(c)
  return c == "" or c:match("%s") ~= nil
end

local function is_alnum(c)
  return c ~= "" and c:match("[%w]") ~= nil
end

-- Inline spans of s[from..to] (1-based, inclusive), appended to spans;
-- used marks bytes already taken (code spans, links).
local function emphasis(s, from, to, used, spans)
  -- Candidate delimiter runs, left to right.
  local runs = {}
  local i = from
  while i <= to do
    local c = s:sub(i, i)
    if (c == "*" or c == "_" or c == "~") and not used[i] then
      local j = i
      while j + 1 <= to and s:sub(j + 1, j + 1) == c and not used[j + 1] do
        j = j + 1
      end
      local before, after = s:sub(i - 1, i - 1), s:sub(j + 1, j + 1)
      if i == 1 then
        before = ""
      end
      local left = not is_space(after) -- may open
      local right = not is_space(before) -- may close
      if c == "_" then
        -- snake_case is not emphasis
        left = left and not is_alnum(before)
        right = right and not is_alnum(after)
      end
      if not (c == "~" and j - i + 1 ~= 2) then
        runs[#runs + 1] = { i = i, n = j - i + 1, c = c, left = left, right = right }
      end
      i = j + 1
    else
      i = i + 1
    end
  end
  -- Pair each closer with the nearest open run of the same character.
  local stack = {}
  for _, r in ipairs(runs) do
    if r.right then
      for k = #stack, 1, -1 do
        local o = stack[k]
        if o.c == r.c and o.n > 0 and r.n > 0 then
          local n = math.min(o.n, r.n, 2)
          if r.c == "~" then
            n = 2
          end
          local group = r.c == "~" and G.strike or (n == 2 and G.strong or G.emphasis)
          -- the opening delimiter's last n bytes, the closing one's first n
          local os_ = o.i + o.n - n
          spans[#spans + 1] = { os_ - 1, os_ - 1 + n, nil, "" }
          spans[#spans + 1] = { os_ - 1 + n, r.i - 1, group }
          spans[#spans + 1] = { r.i - 1, r.i - 1 + n, nil, "" }
          o.n = o.n - n
          r.i = r.i + n
          r.n = r.n - n
          for x = k + 1, #stack do
            stack[x] = nil -- runs opened inside are left unmatched
          end
          if o.n == 0 then
            stack[k] = nil
          end
          break
        end
      end
    end
    if r.left and r.n > 0 then
      stack[#stack + 1] = r
    end
  end
end

--- Spans of inline markdown in line from byte from (1-based).
---@param line string
---@param from integer|nil
---@return acp.Span[]
function M.inline(line, from)
  local spans = {}
  local used = {}
  local n = #line
  local i = from or 1
  -- Code spans and escapes first: nothing inside them is markup.
  while i <= n do
    local c = line:sub(i, i)
    if c == "\\" and i < n and line:sub(i + 1, i + 1):match(punct) then
      spans[#spans + 1] = { i - 1, i, nil, "" }
      spans[#spans + 1] = { i, i + 1, G.escape }
      used[i], used[i + 1] = true, true
      i = i + 2
    elseif c == "`" then
      local run = line:match("^`+", i)
      local k = #run
      local j = i + k
      local close
      while true do
        local s, e = line:find("`+", j)
        if not s then
          break
        end
        if e - s + 1 == k then
          close = s
          break
        end
        j = e + 1
      end
      if close then
        spans[#spans + 1] = { i - 1, i - 1 + k, nil, "" }
        spans[#spans + 1] = { i - 1 + k, close - 1, G.code }
        spans[#spans + 1] = { close - 1, close - 1 + k, nil, "" }
        for x = i, close + k - 1 do
          used[x] = true
        end
        i = close + k
      else
        for x = i, i + k - 1 do
          used[x] = true -- a lone run is literal
        end
        i = i + k
      end
    else
      i = i + 1
    end
  end
  -- Links: [label](url) shows "label (url)", or the label alone when it is
  -- the url. The label is the agent's to choose ("[https://pypi.org/x]"
  -- may lead elsewhere) and the chat has no hover: a link shows where it
  -- leads (issue 21). <url> and bare URLs are styled.
  i = from or 1
  while true do
    local s, e, label_end, url_s, url_e = line:find("%[[^%]]*()%]%(()[^%s()]*()%)", i)
    if not s then
      break
    end
    if not used[s] and not used[e] then
      spans[#spans + 1] = { s - 1, s, nil, "" }
      spans[#spans + 1] = { s, label_end - 1, G.link }
      if line:sub(s + 1, label_end - 1) == line:sub(url_s, url_e - 1) then
        spans[#spans + 1] = { label_end - 1, e, nil, "" }
      else
        spans[#spans + 1] = { label_end - 1, label_end, nil, " " }
        spans[#spans + 1] = { label_end, e, G.url }
      end
      used[s], used[label_end], used[label_end + 1], used[e] = true, true, true, true
      for x = url_s, url_e - 1 do
        used[x] = true
      end
    end
    i = e + 1
  end
  i = from or 1
  while true do
    local s, e = line:find("<?https?://[^%s<>()%[%]`]+>?", i)
    if not s then
      break
    end
    if line:sub(s, s) ~= "<" then
      e = s - 1 + #line:sub(s, e):gsub("[.,;:!?*_~]+$", "") -- "see https://x." ends before "."
    end
    if not used[s] then
      spans[#spans + 1] = { s - 1, e, G.url }
      for x = s, e do
        used[x] = true
      end
    end
    i = e + 1
  end
  emphasis(line, from or 1, n, used, spans)
  return spans
end

--- Spans of a line of prose (outside code blocks): headings, quotes, list
--- markers, task boxes, rules, table pipes, then inline markup.
---@param line string
---@return acp.Span[]
function M.line(line)
  if line == "" then
    return {}
  end
  local hashes = line:match("^(#+)%s") or line:match("^(#+)$")
  if hashes and #hashes <= 6 then
    local spans = M.inline(line, #hashes + 1)
    table.insert(spans, 1, { 0, #line, G.heading[#hashes] })
    return spans
  end
  if line:match("^ *[-*_]") then
    local ch = line:match("^ *([-*_])")
    local rest = line:gsub("[ \t]", "")
    if #rest >= 3 and not rest:find("[^" .. (ch == "-" and "%-" or ch) .. "]") then
      return { { 0, #line, G.rule } }
    end
  end
  local spans = {}
  local pos = 1
  local q = line:match("^ *>[> ]*")
  if q then
    spans[#spans + 1] = { 0, #line, G.quote }
    pos = #q + 1
  end
  local lead, marker, gap = line:match("^( *)([-*+])( +)", pos)
  if not marker then
    lead, marker, gap = line:match("^( *)(%d+[.)])( +)", pos)
  end
  if marker then
    local ms = pos + #lead
    spans[#spans + 1] = { ms - 1, ms - 1 + #marker, G.list }
    pos = ms + #marker + #gap
    local box = line:match("^%[([ xX])%]", pos)
    if box then
      spans[#spans + 1] = { pos - 1, pos + 2, box == " " and G.task or G.task_done }
      pos = pos + 3
    end
  end
  if line:find("|", pos, true) and line:match("^ *|") then
    local i = pos
    while true do
      local s = line:find("|", i, true)
      if not s then
        break
      end
      spans[#spans + 1] = { s - 1, s, G.pipe }
      i = s + 1
    end
  end
  vim.list_extend(spans, M.inline(line, pos))
  return spans
end

return M
