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

-- The body lines of one item of a section, with a highlight group (or nil).
local function item_lines(it, icons)
  if it.kind == "tool" then
    local lines = render.tool_lines(it.data, { icons = icons, limit = 1 })
    local icon, hl = render.icon(it.data.status, icons)
    return { lines[1] }, { { 0, 0, #icon, hl } }
  end
  local out = split(it.text or "")
  while #out > 1 and out[#out] == "" do
    out[#out] = nil
  end
  if it.kind == "message" then
    local arrow = it.to_child and "→ " or "← "
    out[1] = arrow .. (out[1] or "")
    return out, { { 0, 0, #arrow, "AcpToolKind" } }
  end
  if it.kind == "thought" then
    local his = {}
    for i = 1, #out do
      his[#his + 1] = { i - 1, 0, -1, "AcpPlaceholder" }
    end
    return out, his
  end
  return out, {}
end

--- Lines of section sec, and highlights {row, col0, col1, group} (rows
--- from 0), and marker rows: row -> "fold" (its header) or "full" (the
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
  local body, bhis = {}, {}
  for _, it in ipairs(sec.items) do
    local l, h = item_lines(it, icons)
    for _, x in ipairs(h) do
      bhis[#bhis + 1] = { x[1] + #body, x[2], x[3], x[4] }
    end
    vim.list_extend(body, l)
  end
  local from = 1
  if not sec.full and #body > M.TAIL then
    from = #body - M.TAIL + 1
    lines[#lines + 1] = PREFIX .. ("… %d earlier lines, <CR> to show"):format(from - 1)
    his[#his + 1] = { #lines - 1, #PREFIX, -1, "AcpPlaceholder" }
    markers[#lines - 1] = "full"
  end
  local first = #lines - from + 1 -- row of body line i is first + i - 1
  for i = from, #body do
    lines[#lines + 1] = PREFIX .. body[i]
    his[#his + 1] = { #lines - 1, 4, #PREFIX, "AcpPlaceholder" }
  end
  for _, h in ipairs(bhis) do
    if h[1] + 1 >= from then
      his[#his + 1] = { first + h[1], h[2] + #PREFIX, h[3] == -1 and -1 or h[3] + #PREFIX, h[4] }
    end
  end
  return lines, his, markers
end

return M
