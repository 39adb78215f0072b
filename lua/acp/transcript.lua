--- The chat transcript: a buffer of blocks (messages, tool calls, plans)
--- that streamed text is appended to and that tool calls update in place.
--- Only this module writes the chat buffer and the transcript's fields;
--- the rest of the plugin calls its methods.
local diff = require("acp.diff")
local texts = require("acp.text")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_transcript")
M.ns = ns

local split, one_line = texts.split, texts.one_line

--- Lines of rawOutput shown under a tool call (the rest is counted).
local RAW_OUTPUT_LINES = 8

---@class acp.Block
---@field kind "header"|"user_text"|"agent"|"thought"|"user"|"message"|"stop"|"tool"|"plan"|"placeholder"
---@field n integer number of lines
---@field mark integer|nil extmark at the block's first line
---@field hl string|table[]|nil a group for the whole block, or {row, col0, col1, group} items
---@field hl_ids integer[]|nil highlight extmarks
---@field open boolean|nil a text stream still being appended to
---@field data table|nil a tool call's merged fields
---@field rejected boolean|nil the user rejected the tool call
---@field folded_in table<integer, true>|nil windows where the thought is folded

---@class acp.Transcript
---@field buf integer the chat buffer
---@field blocks acp.Block[] in buffer order
---@field tools table<string, acp.Block> tool call blocks by toolCallId
---@field turn_tools table<string, true> tool calls of the current turn
---@field plan_block acp.Block|nil the current turn's plan
---@field turn_header boolean|nil the agent's header of this turn is shown
---@field following table<integer, true>|nil windows that follow the end
---@field batching boolean|nil in T:batch(): windows follow once at the end
---@field deferred table[]|nil warnings waiting for the end of a stream
---@field title string|nil name in the agent's headers (default: agent)
---@field agent string
---@field icons boolean
---@field terminals acp.Terminals|nil the session's terminals (terminal content)
local T = {}
T.__index = T

--- Create a transcript on buffer buf.
---@param buf integer
---@param opts { agent: string, title: string|nil, icons: boolean, terminals: acp.Terminals|nil }
---@return acp.Transcript
function M.new(buf, opts)
  return setmetatable({
    buf = buf,
    blocks = {},
    tools = {},
    turn_tools = {},
    agent = opts.agent,
    title = opts.title,
    icons = opts.icons,
    terminals = opts.terminals,
  }, T)
end

--- Set the name shown in the agent's headers from now on.
---@param title string|nil
function T:set_title(title)
  self.title = title
end

--- Run fn (which may edit the transcript many times); windows following the
--- end move once, after it. Nested batches follow at the outermost end.
---@param fn fun()
function T:batch(fn)
  local outer = self.batching
  self.batching = true
  local ok, err = pcall(fn)
  self.batching = outer
  if not outer then
    pcall(self.follow, self)
  end
  if not ok then
    error(err, 0)
  end
end

function T:_edit(fn)
  local buf = self.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  -- Windows following the end of the transcript keep following it; the
  -- cursor moves once per batch of events (see follow()).
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(win)[1] >= last then
      self.following = self.following or {}
      self.following[win] = true
    end
  end
  vim.bo[buf].modifiable = true
  local ok, err = pcall(fn, buf)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if not self.batching then
    self:follow()
  end
  if not ok then
    error(err, 0)
  end
end

--- Move following windows to the end (after a batch of edits).
function T:follow()
  local wins = self.following
  self.following = nil
  if not wins or not api.nvim_buf_is_valid(self.buf) then
    return
  end
  local n = api.nvim_buf_line_count(self.buf)
  for win in pairs(wins) do
    if api.nvim_win_is_valid(win) and api.nvim_win_get_buf(win) == self.buf then
      pcall(api.nvim_win_set_cursor, win, { n, 0 })
    end
  end
end

function T:_empty()
  local buf = self.buf
  return api.nvim_buf_line_count(buf) == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == ""
end

function T:_start(b)
  return api.nvim_buf_get_extmark_by_id(self.buf, ns, b.mark, {})[1]
end

--- Append a new block of lines at the end; returns the block.
function T:_append(kind, lines, hl)
  if not api.nvim_buf_is_loaded(self.buf) then
    return { kind = kind, n = #lines } -- the chat buffer is gone; see chat.show
  end
  self:close_stream()
  local b = { kind = kind, n = #lines, hl = hl }
  self:_edit(function(buf)
    local start
    if self:_empty() then
      start = 0
      api.nvim_buf_set_lines(buf, 0, 1, false, lines)
    else
      local n = api.nvim_buf_line_count(buf)
      local prev = self.blocks[#self.blocks]
      -- One blank line between blocks: drop the blank lines a stream ended with.
      while prev and prev.n > 1 and api.nvim_buf_get_lines(buf, n - 1, n, false)[1] == "" do
        api.nvim_buf_set_lines(buf, n - 1, n, false, {})
        prev.n = prev.n - 1
        n = n - 1
      end
      local lastline = api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
      local pad = (lastline ~= "" and not (prev and prev.kind == "header")) and { "" } or {}
      start = n + #pad
      api.nvim_buf_set_lines(buf, n, n, false, vim.list_extend(pad, lines))
    end
    b.mark = api.nvim_buf_set_extmark(buf, ns, start, 0, { right_gravity = false })
  end)
  self.blocks[#self.blocks + 1] = b
  self:_highlight(b)
  return b
end

--- Replace a block's lines in place.
function T:_replace(b, lines, hl)
  if not b.mark or not api.nvim_buf_is_loaded(self.buf) then
    return
  end
  b.hl = hl or b.hl
  self:_edit(function(buf)
    local s = self:_start(b)
    api.nvim_buf_set_lines(buf, s, s + b.n, false, lines)
    b.n = #lines
  end)
  self:_highlight(b)
end

-- hl: a group for the whole block, or a list of {row, col_start, col_end, group}.
function T:_highlight(b)
  if not b.mark or not api.nvim_buf_is_loaded(self.buf) then
    return
  end
  if not b.hl then
    return
  end
  local buf = self.buf
  local s = self:_start(b)
  for _, id in ipairs(b.hl_ids or {}) do
    api.nvim_buf_del_extmark(buf, ns, id)
  end
  b.hl_ids = {}
  local function mark(row, c0, c1, group)
    local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
    c1 = (c1 == -1 or c1 > #line) and #line or c1
    b.hl_ids[#b.hl_ids + 1] =
      api.nvim_buf_set_extmark(buf, ns, row, c0, { end_row = row, end_col = c1, hl_group = group })
  end
  if type(b.hl) == "string" then
    local last = s + b.n - 1
    local line = api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
    b.hl_ids[1] = api.nvim_buf_set_extmark(buf, ns, s, 0, { end_row = last, end_col = #line, hl_group = b.hl })
  else
    for _, h in ipairs(b.hl) do
      if h[1] < b.n then
        mark(s + h[1], h[2], h[3], h[4])
      end
    end
  end
end

--- The last block, if it is an open text stream of kind.
function T:_stream(kind)
  local b = self.blocks[#self.blocks]
  if b and b.kind == kind and b.open then
    return b
  end
end

--- Close any open stream so the next text starts a new block.
function T:close_stream()
  local b = self.blocks[#self.blocks]
  if b and b.open then
    b.open = false
    self:_fold_thought(b)
  end
  local deferred = self.deferred
  self.deferred = nil
  for _, m in ipairs(deferred or {}) do
    self:message(m[1], m[2])
  end
end

local stream_hl = { thought = "AcpThought" }

--- Append streamed text of kind "agent", "thought" or "user".
---@param kind string
---@param text string
function T:append_text(kind, text)
  if not api.nvim_buf_is_loaded(self.buf) then
    return
  end
  if text == "" then
    return
  end
  local b = self:_stream(kind)
  if not b then
    -- A new block starts after a blank line already: leading newlines go.
    text = text:gsub("^\n+", "")
    if text == "" then
      return
    end
    if kind == "user" then
      -- A user turn (history replayed by session/load): the agent's next
      -- words get their own header.
      self:user_header()
      self.turn_header = false
      self.plan_block = nil
    elseif not self.turn_header then
      self:agent_header()
    end
    b = self:_append(kind, split(text), stream_hl[kind])
    b.open = true
    return
  end
  self:_edit(function(buf)
    local n = api.nvim_buf_line_count(buf)
    local lastline = api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
    local pieces = split(text)
    api.nvim_buf_set_text(buf, n - 1, #lastline, n - 1, #lastline, pieces)
    b.n = b.n + #pieces - 1
  end)
  if b.hl then
    self:_highlight(b)
  end
end

-- Thoughts fold once they are complete (while streaming they stay visible).
function T:_fold_thought(b, win)
  if b.kind ~= "thought" or b.open or b.n < 2 then
    return
  end
  b.folded_in = b.folded_in or {}
  local wins = win and { win } or vim.fn.win_findbuf(self.buf)
  local s = self:_start(b) + 1
  for _, w in ipairs(wins) do
    if not b.folded_in[w] and api.nvim_win_is_valid(w) and vim.wo[w].foldmethod == "manual" then
      api.nvim_win_call(w, function()
        vim.cmd(("silent! %d,%dfold"):format(s, s + b.n - 1))
      end)
      b.folded_in[w] = true
    end
  end
end

--- Fold the finished thoughts in a window newly showing the chat.
function T:refold(win)
  for _, b in ipairs(self.blocks) do
    self:_fold_thought(b, win)
  end
end

--- Start a user turn: header, text and the labels of its context.
---@param text string
---@param context string[]|nil
function T:user_message(text, context)
  -- A new turn is followed in every window showing the chat, wherever the
  -- user had scrolled to.
  if api.nvim_buf_is_valid(self.buf) then
    for _, win in ipairs(vim.fn.win_findbuf(self.buf)) do
      self.following = self.following or {}
      self.following[win] = true
    end
  end
  self:close_stream()
  self:user_header()
  local lines = split(text)
  if context and #context > 0 then
    lines[#lines + 1] = "Context: " .. table.concat(context, ", ")
  end
  self:_append("user_text", lines)
  self.turn_header = false
  self.plan_block = nil
  self.turn_tools = {}
end

--- Mark the turn's unfinished tool calls cancelled (the agent may never
--- update them after a cancel); returns their ids.
---@return string[]
function T:cancel_unfinished()
  local ids = {}
  for id in pairs(self.turn_tools) do
    local b = self.tools[id]
    if b and (b.data.status == nil or b.data.status == "pending" or b.data.status == "in_progress") then
      b.data.status = "cancelled"
      local lines, his = self:tool_lines(b.data)
      self:_replace(b, lines, his)
      ids[#ids + 1] = id
    end
  end
  return ids
end

function T:user_header()
  self:_append("header", { "## You" }, "AcpUser")
end

function T:agent_header()
  self:_append("header", { "## " .. (self.title or self.agent or "Agent") }, "AcpAgent")
  self.turn_header = true
end

function T:_ensure_header()
  if not self.turn_header then
    self:agent_header()
  end
end

--- Show a one-line message (info or error).
---@param level "info"|"error"|"warn"
---@param text string
function T:message(level, text)
  -- Warnings that arrive mid-sentence (a file changed on disk while the
  -- agent streams) wait for the end of the stream; the rest show at once.
  local b = self.blocks[#self.blocks]
  if level == "warn" and b and b.open and (b.kind == "agent" or b.kind == "thought") then
    self.deferred = self.deferred or {}
    table.insert(self.deferred, { level, text })
    return
  end
  self:close_stream()
  local prefix = level == "error" and "**Error:** " or (level == "warn" and "**Warning:** " or "")
  local lines = split(prefix .. text)
  self:_append("message", lines, level == "error" and "AcpError" or "AcpInfo")
end

--- Show the end of a turn.
---@param reason string
function T:stop(reason)
  self:close_stream()
  self:_append("stop", { ("_stop: %s_"):format(reason) }, "AcpStop")
  self.turn_header = false
end

local icons = {
  pending = { "󰄱", "[ ]", "AcpToolPending" },
  in_progress = { "󰦖", "[~]", "AcpToolInProgress" },
  completed = { "󰄵", "[x]", "AcpToolCompleted" },
  failed = { "󰅙", "[!]", "AcpToolFailed" },
  cancelled = { "󰜺", "[-]", "AcpToolCancelled" },
  rejected = { "󰜺", "[-]", "AcpToolCancelled" },
}

function T:icon(status)
  local i = icons[status] or icons.pending
  return self.icons and i[1] or i[2], i[3]
end

local function indent(lines, prefix)
  local out = {}
  for _, l in ipairs(lines) do
    out[#out + 1] = prefix .. l
  end
  return out
end

--- Lines for one content block (text, diff, terminal, resource, image...).
---@param c table an ACP ToolCallContent or ContentBlock
---@param terminals acp.Terminals|nil the session's terminals, for terminal content
---@return string[]
function M.content_lines(c, terminals)
  local t = c.type
  if t == "content" then
    local inner = c.content or {}
    if inner.type == "text" then
      return split(inner.text or "")
    end
    return M.content_lines(inner)
  elseif t == "text" then
    return split(c.text or "")
  elseif t == "diff" then
    local out = { "```diff" }
    vim.list_extend(out, diff.unified(c.path or "?", c.oldText, c.newText or ""))
    out[#out + 1] = "```"
    return out
  elseif t == "terminal" then
    if terminals then
      return terminals:content_lines(c)
    end
    return { ("[terminal %s] (no output yet)"):format(c.terminalId or "?") }
  elseif t == "image" then
    return { ("[image %s]"):format(c.mimeType or "") }
  elseif t == "audio" then
    return { ("[audio %s]"):format(c.mimeType or "") }
  elseif t == "resource_link" then
    return { ("[resource %s%s]"):format(c.uri or "?", c.mimeType and (" " .. c.mimeType) or "") }
  elseif t == "resource" then
    local r = c.resource or {}
    return { ("[resource %s%s]"):format(r.uri or "?", r.mimeType and (" " .. r.mimeType) or "") }
  end
  return { ("[unsupported content: %s]"):format(tostring(t)) }
end

--- Lines and highlights for a tool call.
function T:tool_lines(tc)
  local icon, hl = self:icon(tc.status)
  -- Without a title, the kind says more than an id like "write_file__1795_0".
  local head = ("%s %s"):format(
    icon,
    one_line(tc.title or (tc.kind and tc.kind ~= "other" and (tc.kind .. " tool call")) or "tool call")
  )
  local meta = ("  (%s%s)"):format(one_line(tc.kind or "other"), tc.status and (", " .. one_line(tc.status)) or "")
  local lines = { head .. meta }
  local his = { { 0, 0, #icon, hl }, { 0, #icon + 1, #head, "AcpToolTitle" }, { 0, #head, -1, "AcpToolKind" } }
  for _, loc in ipairs(type(tc.locations) == "table" and tc.locations or {}) do
    if type(loc) == "table" and type(loc.path) == "string" then
      -- Lines are 1-based: a line 0 (codex, gemini) means the file.
      local line = tonumber(loc.line)
      line = line and line >= 1 and math.floor(line) or nil
      local l = "    " .. one_line(vim.fn.fnamemodify(loc.path, ":~:.")) .. (line and (":" .. line) or "")
      lines[#lines + 1] = l
      his[#his + 1] = { #lines - 1, 4, -1, "AcpLocation" }
    end
  end
  local shows_output = false
  for _, c in ipairs(type(tc.content) == "table" and tc.content or {}) do
    if type(c) ~= "table" then
      goto continue
    end
    if c.type == "terminal" or c.type == "content" or c.type == "text" then
      shows_output = true
    end
    local first = #lines
    vim.list_extend(lines, indent(M.content_lines(c, self.terminals), "    "))
    if c.type == "diff" then
      for row = first + 1, #lines do
        local group = diff.highlight(lines[row]:sub(5))
        if group then
          his[#his + 1] = { row - 1, 4, -1, group }
        end
      end
    end
    ::continue::
  end
  -- Agents that run commands themselves (codex) may report output only here.
  local out = not shows_output and M.raw_output_text(tc.rawOutput)
  if out then
    local tail = split((out:gsub("\n+$", "")))
    local n = RAW_OUTPUT_LINES
    if #tail > n then
      lines[#lines + 1] = ("    ... (%d more lines)"):format(#tail - n)
      his[#his + 1] = { #lines - 1, 4, -1, "AcpPlaceholder" }
      tail = vim.list_slice(tail, #tail - n + 1)
    end
    vim.list_extend(lines, indent(tail, "    "))
  end
  return lines, his
end

--- The text of a tool call's rawOutput, if it has any: a string, or a table
--- with one of the fields agents use for command output.
function M.raw_output_text(raw)
  if type(raw) == "string" then
    return raw ~= "" and raw or nil
  end
  if type(raw) ~= "table" then
    return nil
  end
  for _, k in ipairs({ "formatted_output", "aggregated_output", "output", "stdout", "content" }) do
    if type(raw[k]) == "string" and raw[k] ~= "" then
      return raw[k]
    end
  end
end

--- Create or update the block of a tool call (tool_call or tool_call_update).
---@param u table the update
---@return acp.Block
function T:tool(u)
  local id = u.toolCallId or "?"
  local b = self.tools[id]
  if not b then
    self:close_stream()
    self:_ensure_header()
    local data = vim.deepcopy(u)
    local lines, his = self:tool_lines(data)
    b = self:_append("tool", lines, his)
    b.data = data
    self.tools[id] = b
    self.turn_tools[id] = true
    return b
  end
  for k, v in pairs(u) do
    if k ~= "sessionUpdate" then
      b.data[k] = v
    end
  end
  if u.status == "failed" and b.rejected then
    b.data.status = "rejected" -- the agent reports the user's "no" as a failure
  elseif u.status == "rejected" then
    b.rejected = true
  end
  local lines, his = self:tool_lines(b.data)
  self:_replace(b, lines, his)
  return b
end

-- Markdown task boxes ("[~]" would be read as a link and concealed); the
-- entry in progress says so and is highlighted.
local plan_marks = {
  completed = { "[x]", "AcpPlanDone" },
  in_progress = { "[ ]", "AcpPlanActive", " (in progress)" },
  pending = { "[ ]", "AcpPlanPending" },
}

--- Whether a block exists for tool call id.
---@param id string
---@return boolean
function T:has_tool(id)
  return self.tools[id] ~= nil
end

--- The merged fields of tool call id (nil when unknown); do not modify.
---@param id string
---@return table|nil
function T:tool_data(id)
  local b = self.tools[id]
  return b and b.data
end

--- Draw tool call id again (its terminal output changed, say).
---@param id string
function T:refresh_tool(id)
  local b = self.tools[id]
  if b and b.data then
    local lines, his = self:tool_lines(b.data)
    self:_replace(b, lines, his)
  end
end

--- Draw again every tool call showing terminal id.
---@param id string
function T:refresh_terminal(id)
  for tcid, b in pairs(self.tools) do
    for _, c in ipairs(b.data and type(b.data.content) == "table" and b.data.content or {}) do
      if type(c) == "table" and c.type == "terminal" and c.terminalId == id then
        self:refresh_tool(tcid)
        break
      end
    end
  end
end

--- The merged fields of the tool call at 0-based row, if there is one.
---@param row integer
---@return table|nil
function T:tool_at(row)
  local b = self:block_at(row)
  return b and b.kind == "tool" and b.data or nil
end

--- Lines for a plan.
---@param entries table[]
---@return string[] lines, table[] highlights
function M.plan_lines(entries)
  local lines, his = { "**Plan**" }, { { 0, 0, -1, "AcpPlanHeader" } }
  for _, e in ipairs(type(entries) == "table" and entries or {}) do
    if type(e) ~= "table" then
      goto continue
    end
    local m = plan_marks[e.status] or plan_marks.pending
    local prio = e.priority and e.priority ~= "medium" and (" (" .. one_line(e.priority) .. ")") or ""
    lines[#lines + 1] = ("- %s %s%s%s"):format(m[1], one_line(e.content), prio, m[3] or "")
    his[#his + 1] = { #lines - 1, 2, m[3] and -1 or 5, m[2] }
    ::continue::
  end
  return lines, his
end

--- Show the plan, replacing this turn's previous plan.
---@param entries table[]
function T:plan(entries)
  local lines, his = M.plan_lines(entries)
  if self.plan_block then
    self:_replace(self.plan_block, lines, his)
  else
    self:close_stream()
    self:_ensure_header()
    self.plan_block = self:_append("plan", lines, his)
  end
end

--- A short placeholder for something the chat cannot render.
function T:placeholder(text)
  self:close_stream()
  self:_append("placeholder", { text }, "AcpPlaceholder")
end

--- The block containing 0-based row, if any.
function T:block_at(row)
  for i = #self.blocks, 1, -1 do
    local b = self.blocks[i]
    local start = self:_start(b)
    if row >= start and row < start + b.n then
      return b
    end
    if start < row then
      return nil
    end
  end
end

--- 'foldtext' of the chat window.
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local first = vim.fn.getline(vim.v.foldstart)
  if #first > 60 then
    first = first:sub(1, 57) .. "..."
  end
  return ("Thinking (%d line%s): %s"):format(n, n == 1 and "" or "s", first)
end

--- Start over on a new buffer (the old one was wiped out).
function T:reset(buf)
  self.buf = buf
  self.blocks, self.tools, self.turn_tools = {}, {}, {}
  self.plan_block, self.turn_header, self.following, self.deferred = nil, nil, nil, nil
end

--- All lines (for tests and debugging).
function T:lines()
  return api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

return M
