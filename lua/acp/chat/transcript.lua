--- The chat transcript: a buffer of blocks (messages, tool calls, plans)
--- that streamed text is appended to and that tool calls update in place.
--- Only this module writes the chat buffer and the transcript's fields;
--- the rest of the plugin calls its methods.
---
--- Every update costs what it changes, never the length of the transcript:
--- text is appended at the end, a block updated in place rewrites only its
--- changed lines, and markdown is drawn for the rows on screen only
--- (acp.render.view) from each text block's structure (acp.render.doc),
--- which is fed each line once as it completes. Big tool output shows its
--- first and last lines until expanded.
---
--- Every line is written as the user may read it: control, invisible and
--- bidi characters the agent sends are made visible ("␛", "⟨U+202E⟩",
--- acp.text.visible), once, on their way into the buffer.
local config = require("acp.config")
local doc = require("acp.render.doc")
local render = require("acp.render.acp")
local rewind_chat = require("acp.rewind.chat")
local subrender = require("acp.render.subagent")
local texts = require("acp.text")
local view = require("acp.render.view")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_transcript")
M.ns = ns

local split = texts.split

--- Bytes of one line of the chat. Streamed text goes on past it on the
--- next line; a longer line of a block (a tool's output, a message) is cut
--- there, saying how much is left out. Neovim pays a line's length each
--- time the chat scrolls to its end (more with 'linebreak'): an agent
--- streaming a megabyte without a newline made every frame cost it whole.
M.max_line_bytes = 16384

--- The last byte of s at or before e that ends a character (s[e + 1] does
--- not continue one); from-1 when there is none from byte from on.
local function char_end(s, e, from)
  while e >= from do
    local next_byte = s:byte(e + 1)
    if not next_byte or next_byte < 0x80 or next_byte >= 0xC0 then
      return e
    end
    e = e - 1
  end
  return from - 1
end

--- lines with their hiding characters made visible (acp.text.visible) and
--- cut at M.max_line_bytes (the same table when none changed).
---@param lines string[]
---@return string[]
local function bounded(lines)
  local out
  for i, l in ipairs(lines) do
    local v = texts.visible(l)
    if #v > M.max_line_bytes then
      local e = char_end(v, M.max_line_bytes, 1)
      v = ("%s … (%d more bytes on this line)"):format(v:sub(1, e), #v - e)
    end
    if v ~= l then
      out = out or vim.list_slice(lines)
      out[i] = v
    end
  end
  return out or lines
end

--- The pieces of streamed text made visible, in place.
---@param pieces string[]
---@return string[]
local function visible_each(pieces)
  for i, p in ipairs(pieces) do
    pieces[i] = texts.visible(p)
  end
  return pieces
end

--- Streamed pieces (made visible) wrapped at M.max_line_bytes: the first
--- continues a line of used bytes. Costs the pieces' length.
---@param pieces string[]
---@param used integer
---@return string[]
local function wrapped(pieces, used)
  local max = M.max_line_bytes
  local out = {}
  for i, p in ipairs(pieces) do
    local room, from = max - (i == 1 and used or 0), 1
    while #p - from + 1 > room do
      local e = room > 0 and char_end(p, from - 1 + room, from) or from - 1
      out[#out + 1] = p:sub(from, e)
      from, room = e + 1, max
    end
    out[#out + 1] = from == 1 and p or p:sub(from)
  end
  return out
end

--- Time one tick of queued block redraws may take.
local REDRAW_BUDGET_NS = 4e6

--- Bytes of a line whose markdown is drawn; the rest shows plain. A
--- window shows little more of one line, and a redraw must not cost the
--- length of the longest line the agent sent (a megabyte line was parsed
--- again at each redraw, and Neovim stopped answering).
M.styled_bytes = 4096

--- Blocks whose text is markdown (drawn by acp.render.view).
local markdown_kinds = {
  agent = true,
  thought = true,
  user = true,
  user_text = true,
  message = true,
  plan = true,
  stop = true,
  placeholder = true,
}

---@class acp.Block
---@field kind "header"|"user_text"|"agent"|"thought"|"user"|"message"|"stop"|"tool"|"plan"|"placeholder"
---@field n integer number of lines
---@field mark integer|nil extmark at the block's first line
---@field hl string|table[]|nil a group for the whole block, or {row, col0, col1, group} items
---@field hl_ids table[]|nil highlight extmarks: {id, row offset}
---@field open boolean|nil a text stream still being appended to
---@field data table|nil a tool call's merged fields
---@field rejected boolean|nil the user rejected the tool call
---@field folded_in table<integer, true>|nil windows where the thought is folded
---@field doc acp.Doc|nil markdown structure of a text block
---@field lines string[]|nil the lines of a block updated in place (tool, plan)
---@field expanded table<string, true>|nil collapsed content the user expanded
---@field collapsed table<integer, string>|nil line offset of a collapse marker -> its content key

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
---@field thoughts acp.Block[] thought blocks (folded in new windows)
---@field term_tools table<string, table<string, true>> terminal id -> ids of tool calls showing it
---@field render "acp"|"markdown"|"plain" how markdown is drawn (chat.render)
---@field editing boolean|nil in a batch, the buffer is open for edits
---@field redraws acp.Block[]|nil tool blocks waiting to be drawn again (see _redraw_later)
---@field cursor { i: integer, s: integer|nil, next_s: integer|nil }|nil the block being drawn (row_spans)
---@field subagents table<string, table> subagent sections by child session id (or "tool:<id>")
---@field sub_tools table<string, string> tool call id -> the section showing it
---@field sub_messages table<string, table> session_message items by messageId
---@field sub_views table<string, integer>|nil buffers showing a subagent whole, by its id
local T = {}
T.__index = T

--- Create a transcript on buffer buf.
---@param buf integer
---@param opts { agent: string, title: string|nil, icons: boolean, terminals: acp.Terminals|nil }
---@return acp.Transcript
function M.new(buf, opts)
  local t = setmetatable({
    buf = buf,
    blocks = {},
    tools = {},
    turn_tools = {},
    thoughts = {},
    term_tools = {},
    subagents = {},
    sub_tools = {},
    sub_messages = {},
    agent = opts.agent,
    title = opts.title,
    icons = opts.icons,
    terminals = opts.terminals,
    render = config.options.chat.render,
  }, T)
  t:_attach()
  return t
end

-- Draw the buffer's markdown (chat.render = "acp").
function T:_attach()
  if self.render == "acp" and api.nvim_buf_is_valid(self.buf) then
    view.attach(self.buf, self)
  end
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
    pcall(self._close_edits, self)
    pcall(self.follow, self)
  end
  if not ok then
    error(err, 0)
  end
end

-- Windows whose cursor is on the last line follow the end of the
-- transcript; the others are never moved.
function T:_note_following(buf)
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(win)[1] >= last then
      self.following = self.following or {}
      self.following[win] = true
    end
  end
end

-- The end of a batch of edits: the buffer is read-only again.
function T:_close_edits()
  if not self.editing then
    return
  end
  self.editing = false
  if api.nvim_buf_is_valid(self.buf) then
    vim.bo[self.buf].modifiable = false
    vim.bo[self.buf].modified = false
  end
end

function T:_edit(fn)
  local buf = self.buf
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  -- In a batch, the buffer opens for edits once and the windows
  -- following the end are noted once (the cursor moves at its end).
  if not self.editing then
    self:_note_following(buf)
    vim.bo[buf].modifiable = true
    self.editing = true
  end
  local ok, err = pcall(fn, buf)
  if not self.batching then
    self:_close_edits()
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

-- A markdown structure for text block b; code blocks highlighted later
-- redraw their rows.
function T:_new_doc(b)
  b.doc = doc.new(function(cb)
    if b.mark and api.nvim_buf_is_valid(self.buf) then
      local s = self:_start(b)
      if s then
        view.redraw(self.buf, s + cb.s, s + (cb.e or b.n))
      end
    end
  end)
end

--- Append a new block of lines at the end; returns the block. An open
--- block is a text stream: its last line may still grow.
function T:_append(kind, lines, hl, open)
  if not api.nvim_buf_is_loaded(self.buf) then
    return { kind = kind, n = #lines } -- the chat buffer is gone; see chat.show
  end
  self:close_stream()
  lines = bounded(lines)
  local b = { kind = kind, n = #lines, hl = hl, open = open or nil }
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
  if markdown_kinds[kind] then
    self:_new_doc(b)
    if open then
      b.doc:feed(vim.list_slice(lines, 1, #lines - 1))
    else
      b.doc:feed(lines)
      b.doc:finish()
    end
  end
  if kind == "tool" or kind == "plan" then
    b.lines = lines
  end
  if kind == "thought" then
    self.thoughts[#self.thoughts + 1] = b
  end
  self:_highlight(b, lines)
  return b
end

--- Replace a block's lines in place: only the lines that differ are
--- rewritten, so a status change rewrites one line and a reader's view
--- does not move.
function T:_replace(b, lines, hl)
  if not b.mark or not api.nvim_buf_is_loaded(self.buf) then
    return
  end
  b.hl = hl or b.hl
  lines = bounded(lines)
  local old = b.lines
  local changed -- rows {first, old end, new end} of the lines rewritten
  self:_edit(function(buf)
    local s = self:_start(b)
    if not old or #old ~= b.n then
      api.nvim_buf_set_lines(buf, s, s + b.n, false, lines)
    else
      local p, q = 0, 0
      local no, nn = #old, #lines
      while p < no and p < nn and old[p + 1] == lines[p + 1] do
        p = p + 1
      end
      while q < no - p and q < nn - p and old[no - q] == lines[nn - q] do
        q = q + 1
      end
      if p < no or p < nn then
        api.nvim_buf_set_lines(buf, s + p, s + no - q, false, vim.list_slice(lines, p + 1, nn - q))
      end
      changed = { p, no - q, nn - q }
    end
    b.n = #lines
  end)
  b.lines = lines
  if b.doc then
    self:_new_doc(b)
    b.doc:feed(lines)
    b.doc:finish()
  end
  -- A highlight is a function of its line: only rewritten lines get new ones.
  self:_highlight(b, lines, type(b.hl) == "table" and changed or nil)
end

-- hl: a group for the whole block, or a list of {row, col_start, col_end,
-- group}; lines: the block's lines when the caller has them; changed:
-- {first, old_end, new_end} when only those rows were rewritten (the
-- highlights of the other rows stay, moved with their lines).
-- The extmark of highlight h {row, col0, col1, group, gutter} at buffer
-- row row, ending at column c1.
local function hl_opts(h, row, c1)
  local opts = { end_row = row, end_col = c1, hl_group = h[4] }
  if h[5] then
    -- A subagent's gutter: drawn again on each wrapped row of its line.
    opts.virt_text = { { "│", h[4] } }
    opts.virt_text_win_col = subrender.GUTTER_COL
    opts.virt_text_repeat_linebreak = true
  end
  return opts
end

function T:_highlight(b, lines, changed)
  if not b.mark or not b.hl or not api.nvim_buf_is_loaded(self.buf) then
    return
  end
  local buf = self.buf
  local s = self:_start(b)
  local first, old_end, new_end = 0, math.huge, math.huge
  if changed then
    first, old_end, new_end = changed[1], changed[2], changed[3]
  end
  local kept = {}
  for _, m in ipairs(b.hl_ids or {}) do
    local row = m[2]
    if row >= first and row < old_end then
      api.nvim_buf_del_extmark(buf, ns, m[1])
    else
      kept[#kept + 1] = { m[1], row >= old_end and row + new_end - old_end or row }
    end
  end
  b.hl_ids = kept
  if type(b.hl) == "string" then
    local last = s + b.n - 1
    local line = lines and lines[b.n] or api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
    -- Text streamed onto the block's end extends the highlight.
    local id = api.nvim_buf_set_extmark(
      buf,
      ns,
      s,
      0,
      { end_row = last, end_col = #line, hl_group = b.hl, end_right_gravity = true }
    )
    b.hl_ids = { { id, 0 } }
    return
  end
  lines = lines or api.nvim_buf_get_lines(buf, s, s + b.n, false)
  for _, h in ipairs(b.hl) do
    local line = lines[h[1] + 1]
    if line and h[1] >= first and h[1] < new_end then
      local c1 = (h[3] == -1 or h[3] > #line) and #line or h[3]
      local id = api.nvim_buf_set_extmark(buf, ns, s + h[1], h[2], hl_opts(h, s + h[1], c1))
      b.hl_ids[#b.hl_ids + 1] = { id, h[1] }
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
    if b.doc and b.mark and api.nvim_buf_is_valid(self.buf) then
      local last = self:_start(b) + b.n - 1
      b.doc:feed(api.nvim_buf_get_lines(self.buf, last, last + 1, false))
      b.doc:finish()
    end
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
    self:_append(kind, wrapped(visible_each(split(text)), 0), stream_hl[kind], true)
    return
  end
  local pieces = visible_each(split(text))
  local lastline
  self:_edit(function(buf)
    local n = api.nvim_buf_line_count(buf)
    lastline = api.nvim_buf_get_lines(buf, n - 1, n, false)[1]
    pieces = wrapped(pieces, #lastline)
    api.nvim_buf_set_text(buf, n - 1, #lastline, n - 1, #lastline, pieces)
    b.n = b.n + #pieces - 1
  end)
  if b.doc and #pieces > 1 then
    -- The lines this text completed, each fed once.
    local done = { lastline .. pieces[1] }
    for i = 2, #pieces - 1 do
      done[i] = pieces[i]
    end
    b.doc:feed(done)
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
  for _, b in ipairs(self.thoughts) do
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
  -- A long prompt is collapsed as long tool output is (<CR> expands it).
  local shown, marker = render.collapse(lines, false, config.options.chat.collapse_lines)
  local b = self:_append("user_text", shown)
  if marker then
    b.full, b.collapsed = lines, { [marker - 1] = "prompt" }
  end
  self.turn_header = false
  self.plan_block = nil
  self.turn_tools = {}
end

--- Draw tool block b again soon: blocks queued so are drawn a few ms'
--- worth per event-loop tick (a thousand blocks marked at once would keep
--- Neovim busy for tens of ms).
function T:_redraw_later(b)
  if b.queued then
    return
  end
  b.queued = true
  local queue = self.redraws
  if not queue then
    queue = {}
    self.redraws = queue
    vim.defer_fn(function()
      self:_drain_redraws(queue)
    end, 0)
  end
  queue[#queue + 1] = b
end

function T:_drain_redraws(queue)
  if self.redraws ~= queue then
    return -- the buffer was replaced (reset)
  end
  local t0 = vim.uv.hrtime()
  local i = queue.next or 1
  self:batch(function()
    while queue[i] and (vim.uv.hrtime() - t0) < REDRAW_BUDGET_NS do
      local b = queue[i]
      b.queued = nil
      if b.data then
        self:_replace(b, self:_tool_view(b))
      end
      i = i + 1
    end
  end)
  queue.next = i
  if queue[i] then
    vim.defer_fn(function()
      self:_drain_redraws(queue)
    end, 0)
  else
    self.redraws = nil
  end
end

--- Mark the turn's unfinished tool calls cancelled (the agent may never
--- update them after a cancel); returns their ids. Their blocks are
--- redrawn over the next event-loop ticks.
---@return string[]
function T:cancel_unfinished()
  local ids = {}
  for id in pairs(self.turn_tools) do
    local b = self.tools[id]
    if b and (b.data.status == nil or b.data.status == "pending" or b.data.status == "in_progress") then
      b.data.status = "cancelled"
      self:_redraw_later(b)
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

-- Lines of tool block b; its collapse markers are noted. The sections of
-- the subagents it started follow its own lines.
function T:_tool_view(b)
  b.collapsed = {}
  local lines, his = render.tool_lines(b.data, {
    icons = self.icons,
    terminals = self.terminals,
    limit = config.options.chat.collapse_lines,
    expanded = b.expanded,
    collapsed = b.collapsed,
  })
  for _, id in ipairs(b.sections or {}) do
    local sec = self.subagents[id]
    if sec.implicit then -- its state is the state of the tool call it is nested in
      local st = b.data.status
      sec.state = (st == "pending" or st == "in_progress") and "running" or "idle"
    end
    local sl, sh, markers = subrender.lines(sec, { icons = self.icons })
    local off = #lines
    vim.list_extend(lines, sl)
    for _, h in ipairs(sh) do
      his[#his + 1] = { h[1] + off, h[2], h[3], h[4], h[5] }
    end
    for row, m in pairs(markers) do
      b.collapsed[row + off] = (m == "fold" and "subagent:" or "subagent_full:") .. id
    end
  end
  return lines, his
end

-- Remember which terminals tool block id shows (refresh_terminal).
function T:_index_terminals(id, data)
  for _, c in ipairs(type(data.content) == "table" and data.content or {}) do
    if type(c) == "table" and c.type == "terminal" and c.terminalId then
      local ids = self.term_tools[c.terminalId] or {}
      self.term_tools[c.terminalId] = ids
      ids[id] = true
    end
  end
end

-- Merge update u into a tool call's fields data: content marked
-- `_acp_append` (ACP v2's content chunks, acpx.AppendKey) is appended to
-- the content shown, other fields replace theirs.
local function merge(data, u)
  for k, v in pairs(u) do
    if k == "content" and u._acp_append and type(v) == "table" then
      local content = type(data.content) == "table" and data.content or {}
      data.content = content
      for _, c in ipairs(v) do
        content[#content + 1] = c
      end
    elseif k ~= "sessionUpdate" and k ~= "_acp_append" then
      data[k] = v
    end
  end
end

--- Create or update the block of a tool call (tool_call or tool_call_update).
---@param u table the update
---@return acp.Block|nil nil: the tool call is a subagent's, in its section
function T:tool(u)
  local id = u.toolCallId or "?"
  local b = self.tools[id]
  local sec = not b and self:tool_section(id)
  if sec then -- a subagent's: in its section
    self:subagent_tool(sec, u)
    return nil
  end
  if not b then
    self:close_stream()
    self:_ensure_header()
    local data = vim.deepcopy(u)
    data._acp_append = nil
    local proto = { data = data }
    local lines, his = self:_tool_view(proto)
    b = self:_append("tool", lines, his)
    b.data, b.collapsed = data, proto.collapsed
    self.tools[id] = b
    self.turn_tools[id] = true
    self:_index_terminals(id, data)
    return b
  end
  merge(b.data, u)
  if u._acp_append and not u.status then
    -- Streamed content (ACP v2's tool_call_content_chunk): drawn with the
    -- other blocks queued this tick, not once per chunk.
    self:_index_terminals(id, { content = u.content })
    self:_redraw_later(b)
    return b
  end
  if u.status == "failed" and b.rejected then
    b.data.status = "rejected" -- the agent reports the user's "no" as a failure
  elseif u.status == "rejected" then
    b.rejected = true
  end
  self:_index_terminals(id, b.data)
  self:_replace(b, self:_tool_view(b))
  return b
end

--- The tool block a new subagent's section goes under: the tool call the
--- agent names (tool_id), else the latest tool call still running, else a
--- block of its own.
function T:_section_block(id, tool_id, title)
  local b = tool_id and self.tools[tool_id]
  if b then
    return b
  end
  for i = #self.blocks, math.max(1, #self.blocks - 200), -1 do
    local x = self.blocks[i]
    if x.kind == "header" and x.hl == "AcpUser" then
      break -- an earlier turn's tool calls started nothing of this one
    end
    if x.kind == "tool" and x.data and (x.data.status == "pending" or x.data.status == "in_progress") then
      return x
    end
  end
  return self:tool({
    toolCallId = "subagent:" .. id,
    title = "Subagent: " .. (title or id),
    kind = "other",
    status = "in_progress",
    _acp_subagent = id,
  })
end

-- Redraw the block showing section sec soon (many updates of a streaming
-- subagent make one redraw per tick).
function T:_section_changed(sec)
  local b = self.tools[sec.block]
  if b then
    self:_redraw_later(b)
  end
  local vbuf = self.sub_views and self.sub_views[sec.id]
  if vbuf and not sec.view_queued then
    sec.view_queued = true
    vim.schedule(function()
      sec.view_queued = nil
      self:_draw_subagent_view(sec.id)
    end)
  end
end

--- A buffer of its own showing subagent id whole (not folded, every
--- line), kept up to date while it works; nil when id is unknown.
---@param id string
---@return integer|nil
function T:subagent_buffer(id)
  if not self.subagents[id] then
    return nil
  end
  self.sub_views = self.sub_views or {}
  local buf = self.sub_views[id]
  if not (buf and api.nvim_buf_is_valid(buf)) then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].filetype = "acp-subagent"
    vim.bo[buf].formatlistpat = subrender.LISTPAT -- its wrapped rows past the gutter
    pcall(api.nvim_buf_set_name, buf, ("acp://subagent/%d/%s"):format(self.buf, id))
    self.sub_views[id] = buf
  end
  self:_draw_subagent_view(id)
  return buf
end

function T:_draw_subagent_view(id)
  local buf = self.sub_views and self.sub_views[id]
  local sec = self.subagents[id]
  if not (buf and sec and api.nvim_buf_is_valid(buf)) then
    return
  end
  local whole = vim.tbl_extend("force", sec, { folded = false, full = true })
  local lines, his = subrender.lines(whole, { icons = self.icons })
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, h in ipairs(his) do
    local line = lines[h[1] + 1]
    if line then
      local c1 = (h[3] == -1 or h[3] > #line) and #line or h[3]
      pcall(api.nvim_buf_set_extmark, buf, ns, h[1], h[2], hl_opts(h, h[1], c1))
    end
  end
end

--- Create or update the section of subagent id (a subagent_update as
--- acpx reads it: title, description, state, stopReason, canCancel,
--- toolCallId, cleared).
---@param id string the child's session id
---@param u table
---@return table the section
function T:subagent(id, u)
  local sec = self.subagents[id]
  if not sec then
    local b = self:_section_block(id, u.toolCallId, u.title)
    sec = { id = id, items = {}, block = b.data and b.data.toolCallId or "?" }
    self.subagents[id] = sec
    b.sections = b.sections or {}
    b.sections[#b.sections + 1] = id
  end
  for _, k in ipairs(type(u.cleared) == "table" and u.cleared or {}) do
    if k == "title" or k == "description" or k == "state" then
      sec[k] = nil
    elseif k == "capabilities" then
      sec.can_cancel = nil
    end
  end
  if type(u.title) == "string" then
    sec.title = u.title
  end
  if type(u.description) == "string" then
    sec.description = u.description
  end
  if type(u.state) == "string" then
    sec.state, sec.stop_reason = u.state, type(u.stopReason) == "string" and u.stopReason or nil
  end
  if u.canCancel ~= nil then
    sec.can_cancel = u.canCancel == true
  end
  local own = self.tools["subagent:" .. id]
  if own then -- the block of its own follows its state
    own.data.status = sec.state == "running" and "in_progress"
      or sec.state == "requires_action" and "pending"
      or sec.state == "idle" and "completed"
      or own.data.status
  end
  self:_section_changed(sec)
  return sec
end

--- The section of the tool calls an agent nests under tool call parent
--- with claude's _meta.claudeCode.parentToolUseId (nil: no such tool call).
---@param parent string
---@return table|nil
function T:nested_section(parent)
  local id = "tool:" .. parent
  local sec = self.subagents[id]
  if sec then
    return sec
  end
  local b = self.tools[parent]
  if not b or not b.data then
    return nil
  end
  sec = { id = id, items = {}, block = parent, implicit = true }
  self.subagents[id] = sec
  b.sections = b.sections or {}
  b.sections[#b.sections + 1] = id
  return sec
end

--- The section showing tool call id, if one does.
---@param id string
---@return table|nil
function T:tool_section(id)
  local sid = self.sub_tools[id]
  return sid and self.subagents[sid]
end

--- Add or update a tool call in section sec; returns its merged fields.
---@param sec table
---@param u table a tool_call or tool_call_update
---@return table
function T:subagent_tool(sec, u)
  local id = u.toolCallId or "?"
  local it
  for _, x in ipairs(sec.items) do
    if x.kind == "tool" and x.data.toolCallId == id then
      it = x
      break
    end
  end
  if not it then
    it = { kind = "tool", data = {} }
    sec.items[#sec.items + 1] = it
    self.sub_tools[id] = sec.id
  end
  merge(it.data, u)
  self:_section_changed(sec)
  return it.data
end

--- Append streamed text of kind ("agent", "thought") to section sec.
---@param sec table
---@param kind string
---@param text string
function T:subagent_text(sec, kind, text)
  local last = sec.items[#sec.items]
  if not (last and last.kind == kind and last.lines) then
    last = { kind = kind, lines = { "" } }
    sec.items[#sec.items + 1] = last
  end
  -- Its lines grow as the text streams: a chunk costs its own length.
  local parts = split(text)
  local lines = last.lines
  lines[#lines] = lines[#lines] .. parts[1]
  for i = 2, #parts do
    lines[#lines + 1] = parts[i]
  end
  self:_section_changed(sec)
end

--- A session_message upsert or chunk (u) seen in the session shown or in
--- child `on` (nil: the session shown): shown in the section of the
--- child it is to or from, once that is known.
---@param on string|nil
---@param u table
function T:session_message(on, u)
  local mid = type(u.messageId) == "string" and u.messageId or "?"
  local m = self.sub_messages[mid]
  if not m then
    m = { kind = "message", text = "" }
    self.sub_messages[mid] = m
  end
  if u.sessionUpdate == "session_message_chunk" then
    local c = type(u.content) == "table" and u.content or {}
    m.text = m.text .. (c.type == "text" and type(c.text) == "string" and c.text or "")
  else
    if type(u.content) == "table" then
      local parts = {}
      for _, c in ipairs(u.content) do
        if type(c) == "table" and c.type == "text" and type(c.text) == "string" then
          parts[#parts + 1] = c.text
        end
      end
      m.text = table.concat(parts)
    end
    for _, k in ipairs({ "senderSessionId", "recipientSessionId" }) do
      if type(u[k]) == "string" then
        m[k] = u[k]
      end
    end
  end
  local sec = on and self.subagents[on]
    or self.subagents[m.recipientSessionId or ""]
    or self.subagents[m.senderSessionId or ""]
  if not sec then
    return -- shown once an upsert says which child it is to or from
  end
  m.to_child = m.recipientSessionId == sec.id or (on ~= nil and m.senderSessionId ~= on)
  if not m.section then
    m.section = sec.id
    sec.items[#sec.items + 1] = m
  end
  self:_section_changed(self.subagents[m.section])
end

--- The section at 0-based row (its header or body), if any.
---@param row integer
---@return table|nil
function T:subagent_at(row)
  local b = self:block_at(row)
  if not (b and b.kind == "tool" and b.sections) then
    return nil
  end
  local off = row - self:_start(b)
  local best
  for r, key in pairs(b.collapsed or {}) do
    local id = key:match("^subagent:(.*)$")
    if id and r <= off and (not best or r > best[1]) then
      best = { r, id }
    end
  end
  return best and self.subagents[best[2]]
end

--- How many subagents run (state "running" or "requires_action").
---@return integer
function T:running_subagents()
  local n = 0
  for _, sec in pairs(self.subagents) do
    if sec.state == "running" or sec.state == "requires_action" then
      n = n + 1
    end
  end
  return n
end

--- The name of subagent id as the chat shows it (nil: unknown).
---@param id string
---@return string|nil
function T:subagent_name(id)
  local sec = self.subagents[id]
  return sec and subrender.name(sec)
end

--- Whether a block exists for tool call id.
---@param id string
---@return boolean
function T:has_tool(id)
  return self.tools[id] ~= nil or self.sub_tools[id] ~= nil
end

--- The merged fields of tool call id (nil when unknown); do not modify.
---@param id string
---@return table|nil
function T:tool_data(id)
  local b = self.tools[id]
  if b then
    return b.data
  end
  local sec = self:tool_section(id)
  for _, it in ipairs(sec and sec.items or {}) do
    if it.kind == "tool" and it.data.toolCallId == id then
      return it.data
    end
  end
end

--- Draw tool call id again (its terminal output changed, say).
---@param id string
function T:refresh_tool(id)
  local b = self.tools[id]
  if b and b.data then
    self:_replace(b, self:_tool_view(b))
  end
end

--- Draw again every tool call showing terminal id.
---@param id string
function T:refresh_terminal(id)
  for tcid in pairs(self.term_tools[id] or {}) do
    self:refresh_tool(tcid)
  end
end

--- Expand the collapsed content whose marker is on 0-based row (one
--- redraw of its block). Returns false when row shows no marker.
---@param row integer
---@return boolean
function T:expand_at(row)
  local b = self:block_at(row)
  local key = b and b.collapsed and b.collapsed[row - self:_start(b)]
  if not key then
    return false
  elseif b.kind == "user_text" then
    b.collapsed = nil
    self:_replace(b, b.full)
    return true
  end
  local sub = key:match("^subagent:(.*)$")
  local full = key:match("^subagent_full:(.*)$")
  if sub or full then
    local sec = self.subagents[sub or full]
    if sub then
      sec.folded = not sec.folded
    else
      sec.full = true
    end
    self:_replace(b, self:_tool_view(b))
    return true
  end
  b.expanded = b.expanded or {}
  b.expanded[key] = true
  self:_replace(b, self:_tool_view(b))
  return true
end

--- The merged fields of the tool call at 0-based row, if there is one.
---@param row integer
---@return table|nil
function T:tool_at(row)
  local b = self:block_at(row)
  return b and b.kind == "tool" and b.data or nil
end

--- Show the plan, replacing this turn's previous plan.
---@param entries table[]
function T:plan(entries)
  local lines, his = render.plan_lines(entries)
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

-- The index of the last block starting at or before 0-based row (blocks
-- are in buffer order; a binary search over their start marks).
function T:_index_at(row)
  local blocks = self.blocks
  local lo, hi, found = 1, #blocks, nil
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    if self:_start(blocks[mid]) <= row then
      found, lo = mid, mid + 1
    else
      hi = mid - 1
    end
  end
  return found
end

--- The block containing 0-based row, if any.
function T:block_at(row)
  local i = self:_index_at(row)
  local b = i and self.blocks[i]
  if b and row < self:_start(b) + b.n then
    return b
  end
end

--- A redraw of rows from top on begins: the block of each row drawn next
--- is found from here, walking forward (see row_spans).
---@param top integer
function T:begin_draw(top)
  local i = self:_index_at(top) or 1
  local blocks = self.blocks
  self.cursor = {
    i = i,
    s = blocks[i] and self:_start(blocks[i]),
    next_s = blocks[i + 1] and self:_start(blocks[i + 1]),
  }
end

--- What to draw on 0-based row row, appended to out as row, col_start,
--- col_end, group|false, conceal|false, priority, ... (see
--- acp.render.view). Rows are asked in order after begin_draw(); each
--- costs its own line, never the transcript.
---@param row integer
---@param out any[]
function T:row_spans(row, out)
  if self.render ~= "acp" then
    return -- chat.render: someone else draws the markdown, or nobody
  end
  local c = self.cursor
  if not c or (c.s and row < c.s) then
    self:begin_draw(row)
    c = self.cursor
  end
  local blocks = self.blocks
  while c.next_s and c.next_s <= row do
    c.i, c.s = c.i + 1, c.next_s
    c.next_s = blocks[c.i + 1] and self:_start(blocks[c.i + 1])
  end
  local b = blocks[c.i]
  if not (b and b.doc and c.s and row >= c.s and row < c.s + b.n) then
    return
  end
  local line = api.nvim_buf_get_lines(self.buf, row, row + 1, false)[1]
  if not line or line == "" then
    return
  end
  if #line > M.styled_bytes then
    line = line:sub(1, M.styled_bytes)
  end
  local off = row - c.s
  local cb = b.doc:unhighlighted_at(off)
  if cb then
    self:_highlight_code(b, cb)
  end
  for _, sp in ipairs(b.doc:spans(off, line)) do
    local n = #out
    out[n + 1], out[n + 2], out[n + 3] = row, sp[1], math.min(sp[2], #line)
    out[n + 4], out[n + 5], out[n + 6] = sp[3] or false, sp[4] or false, sp[5]
  end
end

--- What to draw on rows [top, bot] (see row_spans).
---@param top integer
---@param bot integer
---@return any[]
function T:decorations(top, bot)
  local out = {}
  self:begin_draw(top)
  for row = top, math.min(bot, api.nvim_buf_line_count(self.buf) - 1) do
    self:row_spans(row, out)
  end
  return out
end

-- Highlight code block cb of text block b in its language, in the
-- background, if it is still on screen when its turn comes.
function T:_highlight_code(b, cb)
  local buf = self.buf
  local function rows()
    local s = b.mark and api.nvim_buf_is_valid(buf) and self:_start(b)
    return s and s + cb.s, s and s + cb.e
  end
  b.doc:highlight(cb, function()
    local first, last = rows()
    return first and api.nvim_buf_get_lines(buf, first, last + 1, false)
  end, function()
    local first, last = rows()
    if not first then
      return false
    end
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      local top, bot = vim.fn.line("w0", win) - 1, vim.fn.line("w$", win) - 1
      if first <= bot and last >= top then
        return true
      end
    end
    return false
  end)
end

---@class acp.CodeBlockRange
---@field row integer 0-based row of the opening fence
---@field end_row integer row of the closing fence (while open: the block's last row)
---@field closed boolean the closing fence arrived
---@field lang string|nil the info string's first word ("lua")
---@field info string the whole info string

--- The fenced code blocks of the transcript, in order (for jumping to,
--- yanking or applying them): rows of their fences, language, info.
---@return acp.CodeBlockRange[]
function T:code_blocks()
  local out = {}
  for _, b in ipairs(self.blocks) do
    if b.doc and b.mark then
      local s = self:_start(b)
      for _, cb in ipairs(b.doc:code_blocks()) do
        out[#out + 1] = {
          row = s + cb.s,
          end_row = s + math.min(cb.e or (b.n - 1), b.n - 1),
          closed = cb.closed,
          lang = cb.lang,
          info = cb.info,
        }
      end
    end
  end
  return out
end

--- 'foldtext' of the chat window.
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local rewound = rewind_chat.foldtext(vim.v.foldstart, n)
  if rewound then
    return rewound
  end
  local first = vim.fn.getline(vim.v.foldstart)
  if #first > 60 then
    first = first:sub(1, 57) .. "..."
  end
  return ("Thinking (%d line%s): %s"):format(n, n == 1 and "" or "s", first)
end

--- Start over on a new buffer (the old one was wiped out).
function T:reset(buf)
  self.buf = buf
  self.blocks, self.tools, self.turn_tools, self.thoughts, self.term_tools = {}, {}, {}, {}, {}
  self.plan_block, self.turn_header, self.following, self.deferred, self.editing = nil, nil, nil, nil, nil
  self.redraws = nil
  self.subagents, self.sub_tools, self.sub_messages, self.sub_views = {}, {}, {}, nil
  self:_attach()
end

--- All lines (for tests and debugging).
function T:lines()
  return api.nvim_buf_get_lines(self.buf, 0, -1, false)
end

return M
