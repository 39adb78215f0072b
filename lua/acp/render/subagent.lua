--- ACP to lines: what the chat shows of a subagent (a child session the
--- agent runs, or the tool calls an agent nests under its Task tool call
--- with claude's _meta.claudeCode.parentToolUseId): a header with its
--- title and state, then its messages and tool calls, indented under the
--- tool call that started it. Pure functions of their arguments
--- (acp.chat.transcript keeps the sections and puts these lines in the
--- chat buffer).
local render = require("acp.render.acp")
local texts = require("acp.text")

local M = {}

local split, one_line = texts.split, texts.one_line

--- The last TAIL lines of a section's body show until the user expands it.
M.TAIL = 30

local PREFIX = "    │ "

--- The state of a section as shown: "running", "idle (end_turn)",
--- "needs you"...
---@param sec table
---@return string
function M.state_label(sec)
  local st = sec.state
  if st == "requires_action" then
    return "needs you"
  elseif st == "idle" then
    return sec.stop_reason and ("idle (" .. sec.stop_reason .. ")") or "idle"
  elseif type(st) == "string" then
    return st
  end
  return "?"
end

--- The name of a section: its title, else "subagent".
---@param sec table
---@return string
function M.name(sec)
  return type(sec.title) == "string" and sec.title ~= "" and one_line(sec.title) or "subagent"
end

-- The lines of a text item (streamed text keeps its lines as they come:
-- it.lines; a message has its text), without the blank lines it ends with.
local function text_lines(it)
  local out = it.lines or split(it.text or "")
  local n = #out
  while n > 1 and out[n] == "" do
    n = n - 1
  end
  return out, n
end

-- How many body lines item it takes.
local function item_count(it)
  if it.kind == "tool" then
    return 1
  end
  local _, n = text_lines(it)
  return n
end

-- The body lines of one item of a section from its line `from` on, with
-- highlights {row, col0, col1, group} (rows from 0, of the lines returned).
local function item_lines(it, icons, from)
  from = from or 1
  if it.kind == "tool" then
    local lines = render.tool_lines(it.data, { icons = icons, limit = 1 })
    local icon, hl = render.icon(it.data.status, icons)
    return { lines[1] }, { { 0, 0, #icon, hl } }
  end
  local all, n = text_lines(it)
  local out = {}
  for i = from, n do
    out[#out + 1] = all[i]
  end
  local his = {}
  if it.kind == "message" and from == 1 then
    local arrow = it.to_child and "→ " or "← "
    out[1] = arrow .. (out[1] or "")
    his[1] = { 0, 0, #arrow, "AcpToolKind" }
  elseif it.kind == "thought" then
    for i = 1, #out do
      his[#his + 1] = { i - 1, 0, -1, "AcpPlaceholder" }
    end
  end
  return out, his
end

--- The display column of the body's gutter ("│"), and a 'formatlistpat'
--- that matches the lines that have it: with 'breakindent' and
--- 'breakindentopt' "list:2" their wrapped rows are indented to the text,
--- and the gutter is drawn again on each (virt_text_repeat_linebreak).
M.GUTTER_COL = 4
M.LISTPAT = [[^\s*│ ]]

--- Lines of section sec, and highlights {row, col0, col1, group, gutter}
--- (rows from 0; gutter: the highlight is of the body's "│", drawn again
--- on the line's wrapped rows), and marker rows: row -> "fold" (its header) or "full" (the
--- marker of lines hidden above the tail).
---@param sec table { title, description, state, stop_reason, items, folded, full }
---@param opts { icons: boolean }|nil
---@return string[] lines, table[] his, table<integer, string> markers
function M.lines(sec, opts)
  opts = opts or {}
  local icons = opts.icons
  local head = ("  %s %s · %s"):format(sec.folded and "▸" or "▾", M.name(sec), M.state_label(sec))
  if type(sec.description) == "string" and sec.description ~= "" then
    head = head .. " — " .. one_line(sec.description)
  end
  local lines, his, markers = { head }, { { 0, 2, -1, "AcpToolTitle" } }, { [0] = "fold" }
  if sec.folded then
    local n = 0
    for _, it in ipairs(sec.items) do
      n = n + (it.kind == "tool" and 1 or 0)
    end
    lines[1] = head .. ("  [%d tool call%s]"):format(n, n == 1 and "" or "s")
    return lines, his, markers
  end
  -- Only the lines shown are built: the last TAIL (or all of them), so a
  -- long-running subagent costs what shows, not what it said.
  local total = 0
  for _, it in ipairs(sec.items) do
    total = total + item_count(it)
  end
  local skip = (not sec.full and total > M.TAIL) and total - M.TAIL or 0
  if skip > 0 then
    lines[#lines + 1] = PREFIX .. ("… %d earlier lines, <CR> to show"):format(skip)
    his[#his + 1] = { #lines - 1, #PREFIX, -1, "AcpPlaceholder" }
    his[#his + 1] = { #lines - 1, 4, #PREFIX, "AcpPlaceholder", true }
    markers[#lines - 1] = "full"
  end
  -- The first item shown, and its first line shown.
  local first, from, seen = #sec.items + 1, 1, 0
  for i, it in ipairs(sec.items) do
    local n = item_count(it)
    if seen + n > skip then
      first, from = i, skip - seen + 1
      break
    end
    seen = seen + n
  end
  for i = first, #sec.items do
    local l, h = item_lines(sec.items[i], icons, i == first and from or 1)
    local row0 = #lines
    for _, x in ipairs(h) do
      his[#his + 1] = { row0 + x[1], x[2] + #PREFIX, x[3] == -1 and -1 or x[3] + #PREFIX, x[4] }
    end
    for _, x in ipairs(l) do
      lines[#lines + 1] = PREFIX .. x
      his[#his + 1] = { #lines - 1, 4, #PREFIX, "AcpPlaceholder", true }
    end
  end
  return lines, his, markers
end

return M
