--- The prompts a session queues while its agent works: sent in order, one
--- per turn, when the running turn ends. They are visible (the count in the
--- chat's winbar, the next one in the input's), and editable in place in the
--- queue's own buffer (:AcpQueue): text edited there is what is sent, a
--- prompt's lines removed remove it, and its keys move or remove the prompt
--- under the cursor. A turn that was cancelled or failed holds the queue
--- (the chat says so) until a prompt is sent again.
local chat = require("acp.chat")
local keymaps = require("acp.keymaps")
local layout = require("acp.layout")
local notify = require("acp.notify")
local steer = require("acp.input.steer")
local winbar = require("acp.chat.winbar")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_queue")

---@class acp.QueuedPrompt
---@field text string
---@field blocks table[] the context taken when it was queued (:AcpAdd)
---@field labels string[] their labels
---@field after_cancel boolean|nil the user cancelled the turn to send it: sent when that turn ends
---@field shown boolean|nil the chat shows it already (a steer the agent handed back)

---@class acp.Queue
---@field session acp.Session the owner
---@field items acp.QueuedPrompt[] oldest first
---@field held boolean|nil a cancelled or failed turn holds the queue
---@field buf integer|nil the editor's buffer
---@field win integer|nil the editor's float
---@field shown acp.QueuedPrompt[]|nil the items in the order the editor's headers number them
---@field drawn_tick integer|nil the editor's b:changedtick when last drawn: a later one means the user edited it
---@field editor_hold boolean|nil a turn ended while the editor was open: closing it sends the next
local Q = {}
Q.__index = Q

--- The queue of session.
---@param session acp.Session
---@return acp.Queue
function M.new(session)
  return setmetatable({ session = session, items = {} }, Q)
end

--- How many prompts wait.
---@return integer
function Q:count()
  self:_read()
  return #self.items
end

--- The texts of the queued prompts, in order (tests, statuslines).
---@return string[]
function Q:texts()
  self:_read()
  return vim.tbl_map(function(it)
    return it.text
  end, self.items)
end

--- Queue a prompt (last, or first with opts.front).
---@param text string
---@param blocks table[]|nil
---@param labels string[]|nil
---@param opts { front: boolean|nil, after_cancel: boolean|nil }|nil
---@return acp.QueuedPrompt
function Q:add(text, blocks, labels, opts)
  self:_read()
  opts = opts or {}
  local item = { text = text, blocks = blocks or {}, labels = labels or {}, after_cancel = opts.after_cancel }
  table.insert(self.items, opts.front and 1 or #self.items + 1, item)
  self:refresh()
  return item
end

--- Remove prompt i; returns it.
---@param i integer
---@return acp.QueuedPrompt|nil
function Q:remove(i)
  self:_read()
  local item = table.remove(self.items, i)
  self:refresh()
  return item
end

--- Move prompt i by delta places (clamped).
---@param i integer
---@param delta integer
---@return integer the new position
function Q:move(i, delta)
  self:_read()
  local item = self.items[i]
  if not item then
    return i
  end
  local to = math.max(1, math.min(#self.items, i + delta))
  table.remove(self.items, i)
  table.insert(self.items, to, item)
  self:refresh()
  return to
end

--- Replace the text of prompt i.
---@param i integer
---@param text string
function Q:set_text(i, text)
  self:_read()
  if self.items[i] then
    self.items[i].text = text
    self:refresh()
  end
end

--- Take the first prompt out of the queue.
---@return acp.QueuedPrompt|nil
function Q:pop()
  return self:remove(1)
end

--- The text of all queued prompts, oldest first, separated by blank lines
--- (what is kept when the session ends before they are sent).
---@return string
function Q:drain()
  self:_read()
  local out = vim.tbl_map(function(it)
    return it.text
  end, self.items)
  self.items = {}
  self.held = nil
  self:refresh()
  return table.concat(out, "\n\n")
end

--- The session's turn ended (it is "ready" again): send the next prompt,
--- unless the turn was cancelled or failed (then the queue is held, and
--- the chat says how to go on), or the user cancelled it to send one.
---@param ev { stop_reason: string|nil, error: string|nil }
function Q:turn_ended(ev)
  self:_read()
  local first = self.items[1]
  if not first then
    self.held = nil
    return
  end
  if (ev.error or ev.stop_reason == "cancelled") and not first.after_cancel then
    if not self.held then
      self.held = true
      local key = keymaps.first("input", "steer")
      self.session.transcript:message(
        "info",
        ("%d queued prompt%s wait%s (the turn %s): %s sends the next, :AcpQueue edits them."):format(
          #self.items,
          #self.items == 1 and "" or "s",
          #self.items == 1 and "s" or "",
          ev.error and "failed" or "was cancelled",
          key and (key .. " in an empty input") or ":AcpQueue send"
        )
      )
      self:refresh()
    end
    return
  end
  if self.win and api.nvim_win_is_valid(self.win) then
    -- The user is editing the queue: nothing leaves it half edited. Closing
    -- the editor sends the next prompt.
    self.editor_hold = true
    self.session.transcript:message(
      "info",
      "The queue waits while its editor is open: closing it sends the next prompt."
    )
    self:refresh()
    return
  end
  self:send_next()
end

--- Send the first queued prompt now (the session must be ready).
---@return boolean sent
function Q:send_next()
  local s = self.session
  if s.state ~= "ready" then
    return false
  end
  local item = self:pop()
  if not item then
    return false
  end
  self.held = nil
  s:submit(item.text, item.blocks, item.labels, { shown = item.shown })
  return true
end

-- The editor ---------------------------------------------------------------

--- The header line of prompt i.
local function header(i, item)
  local extra = #item.labels > 0 and ("  (+ %s)"):format(table.concat(item.labels, ", ")) or ""
  return ("── %d ──%s"):format(i, extra)
end

--- The number a header line names, if it is one.
local function header_of(line)
  return tonumber(line:match("^── (%d+) ──"))
end

--- Take the editor's text into the queue: each header starts a prompt (the
--- one it numbers when the editor drew it), the lines up to the next
--- header are its text; a prompt left empty is removed, text above the
--- first header is a new prompt.
function Q:_read()
  local buf = self.buf
  -- Changed since drawn, by keys or by the API (which TextChanged may not
  -- have reported yet).
  if not (buf and api.nvim_buf_is_valid(buf)) or api.nvim_buf_get_changedtick(buf) == self.drawn_tick then
    return
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local items, used = {}, {}
  local cur ---@type acp.QueuedPrompt|nil
  local body = {}
  local function flush()
    local text = vim.trim(table.concat(body, "\n"))
    if cur and text ~= "" then
      cur.text = text
      items[#items + 1] = cur
    elseif not cur and text ~= "" then
      items[#items + 1] = { text = text, blocks = {}, labels = {} }
    end
    body = {}
  end
  for _, l in ipairs(lines) do
    local n = header_of(l)
    if n then
      flush()
      local item = self.shown and self.shown[n]
      local drawn = item and header(n, item)
      if item and not used[item] then
        used[item] = true
        cur = item
      else
        -- A copied or typed header: a prompt of its own, without context.
        cur = { text = "", blocks = {}, labels = {} }
      end
      -- Text typed on the header line is the prompt's, never dropped.
      local rest = (drawn and vim.startswith(l, drawn)) and l:sub(#drawn + 1)
        or l:gsub("^── %d+ ──", "", 1):gsub("^  %(%+ [^)]*%)", "", 1)
      if vim.trim(rest) ~= "" then
        body[#body + 1] = vim.trim(rest)
      end
    else
      body[#body + 1] = l
    end
  end
  flush()
  self.items = items
end

--- The editor's lines for the queue, and its header rows.
function Q:_lines()
  local lines, headers = {}, {}
  for i, item in ipairs(self.items) do
    headers[#headers + 1] = #lines
    lines[#lines + 1] = header(i, item)
    vim.list_extend(lines, vim.split(item.text, "\n", { plain = true }))
  end
  return lines, headers
end

--- Draw the queue in the editor (when it is open).
function Q:_draw()
  local buf = self.buf
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return
  end
  local lines, headers = self:_lines()
  self.shown = vim.list_slice(self.items)
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  self.drawn_tick = api.nvim_buf_get_changedtick(buf)
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, row in ipairs(headers) do
    api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = "AcpQueueHeader" })
  end
  local win = self.win
  if win and api.nvim_win_is_valid(win) then
    pcall(api.nvim_win_set_config, win, self:_win_config())
    if #self.items == 0 then
      self:close_editor()
    end
  end
end

--- The editor's title (how many) and footer (its keys).
---@return string title, string footer
function Q:_title()
  local k = function(action)
    return keymaps.first("queue", action)
  end
  local parts = {}
  for _, p in ipairs({
    { k("move_up"), k("move_down"), "move" },
    { k("remove"), nil, "remove" },
    { k("steer"), nil, "send now" },
    { k("close"), nil, "close" },
  }) do
    local keys = vim.tbl_filter(function(x)
      return x ~= nil
    end, { p[1], p[2] })
    if #keys > 0 then
      parts[#parts + 1] = table.concat(keys, "/") .. " " .. p[3]
    end
  end
  return (" %d queued · edit the text "):format(#self.items), (" %s "):format(table.concat(parts, " · "))
end

--- Where the editor goes: right above the input area, as wide as it and at
--- least layout.min_width (reaching left over the editor when the input is
--- narrower), as high as its wrapped text up to half the screen; centred
--- when the input is not shown. Computed again when the screen or the
--- windows change size.
---@return table config for nvim_open_win / nvim_win_set_config
function Q:_win_config()
  local buf = self.buf
  local lines = buf and api.nvim_buf_is_valid(buf) and api.nvim_buf_get_lines(buf, 0, -1, false) or {}
  local s = self.session
  local anchor = s.input_win and api.nvim_win_is_valid(s.input_win) and s.input_win or nil
  local want = math.min(80, vim.o.columns - 2)
  local width = anchor and math.max(api.nvim_win_get_width(anchor), math.min(want, layout.min_width)) or want
  width = math.max(20, math.min(width, vim.o.columns - 2))
  local rows = layout.wrapped_rows(lines, width - 2) + 1
  local title, footer = self:_title()
  local cfg = {
    relative = "editor",
    width = width - 2,
    title = title,
    title_pos = "left",
    footer = footer,
    footer_pos = "left",
    -- Under the prompts (50): a question that comes while it is open is seen.
    zindex = 40,
  }
  local cap = math.max(12, math.floor(vim.o.lines / 2))
  if anchor then
    local pos = api.nvim_win_get_position(anchor)
    cfg.height = math.max(1, math.min(rows, cap, pos[1] - 2))
    -- The bottom border sits right above the input area; the right edges line up.
    cfg.anchor, cfg.row = "SW", pos[1]
    cfg.col = math.max(0, pos[2] + api.nvim_win_get_width(anchor) - width)
  else
    cfg.height = math.max(1, math.min(rows, cap, vim.o.lines - 4))
    cfg.row, cfg.col = math.floor((vim.o.lines - cfg.height) / 2), 1
  end
  return cfg
end

--- The queued prompt the editor's cursor is in.
---@return integer|nil
function Q:_item_at_cursor()
  if not (self.win and api.nvim_win_is_valid(self.win)) then
    return nil
  end
  self:_read()
  self:_draw()
  local row = api.nvim_win_get_cursor(self.win)[1]
  local lines = api.nvim_buf_get_lines(self.buf, 0, row, false)
  local n
  for i = #lines, 1, -1 do
    n = header_of(lines[i])
    if n then
      return n
    end
  end
  return #self.items > 0 and 1 or nil
end

--- Put the editor's cursor on prompt i's header.
function Q:_cursor_to(i)
  if not (self.win and api.nvim_win_is_valid(self.win)) then
    return
  end
  for row, l in ipairs(api.nvim_buf_get_lines(self.buf, 0, -1, false)) do
    if header_of(l) == i then
      api.nvim_win_set_cursor(self.win, { row, 0 })
      return
    end
  end
end

--- Open the queue's editor: a float over the chat's input area, focused.
--- Returns false (with a message) when nothing is queued.
---@return boolean
function Q:edit()
  self:_read()
  if #self.items == 0 then
    notify("acp: no prompt is queued", vim.log.levels.INFO)
    return false
  end
  if self.win and api.nvim_win_is_valid(self.win) then
    api.nvim_set_current_win(self.win)
    return true
  end
  local s = self.session
  local buf = api.nvim_create_buf(false, true)
  self.buf = buf
  vim.bo[buf].bufhidden = "wipe"
  chat.set_filetype(buf, "markdown")
  pcall(api.nvim_buf_set_name, buf, ("acp://queue/%d"):format(s.key))
  vim.b[buf].acp_session = s.key
  vim.b[buf].acp_role = nil
  self:_draw()
  local cfg = self:_win_config()
  cfg.style, cfg.border = "minimal", "rounded"
  self.win = api.nvim_open_win(buf, true, cfg)
  vim.wo[self.win].wrap = true
  -- The cursor at the end of the first prompt's text: what is typed at
  -- once (Insert mode goes on from the input) edits that prompt.
  local first = #vim.split(self.items[1].text, "\n", { plain = true }) + 1
  local line = api.nvim_buf_get_lines(buf, first - 1, first, false)[1] or ""
  pcall(api.nvim_win_set_cursor, self.win, { first, #line })
  local win = self.win
  local group = api.nvim_create_augroup(("acp_queue_%d"):format(win), { clear = true })
  api.nvim_create_autocmd({ "VimResized", "WinResized" }, {
    group = group,
    callback = function()
      if api.nvim_win_is_valid(win) then
        pcall(api.nvim_win_set_config, win, self:_win_config())
      end
    end,
  })
  -- Leaving the editor takes its text (and redraws the numbering).
  api.nvim_create_autocmd({ "BufLeave", "InsertLeave" }, {
    buffer = buf,
    callback = function()
      self:_read()
      vim.schedule(function()
        self:refresh()
      end)
    end,
  })
  api.nvim_create_autocmd("WinClosed", {
    pattern = tostring(self.win),
    once = true,
    callback = function()
      pcall(api.nvim_del_augroup_by_id, group)
      self:_read()
      self.win = nil
      local held = self.editor_hold
      self.editor_hold = nil
      vim.schedule(function()
        self:refresh()
        if held and self.session.state == "ready" then
          self:send_next() -- the turn ended while the editor was open
        end
      end)
    end,
  })
  keymaps.apply(buf, "queue", {
    move_up = function()
      local i = self:_item_at_cursor()
      if i then
        self:_cursor_to(self:move(i, -1))
      end
    end,
    move_down = function()
      local i = self:_item_at_cursor()
      if i then
        self:_cursor_to(self:move(i, 1))
      end
    end,
    remove = function()
      local i = self:_item_at_cursor()
      if i then
        self:remove(i)
        self:_cursor_to(math.min(i, #self.items))
      end
    end,
    steer = function()
      local i = self:_item_at_cursor()
      local item = i and self:remove(i)
      if item then
        steer.steer(s, item)
      end
    end,
    permission = function()
      if not s.prompts:reopen() then
        notify("acp: no pending permission request", vim.log.levels.INFO)
      end
    end,
    close = function()
      self:close_editor()
    end,
  })
  return true
end

--- Close the editor (its text is kept).
function Q:close_editor()
  self:_read()
  local win = self.win
  self.win = nil
  if win and api.nvim_win_is_valid(win) then
    pcall(api.nvim_win_close, win, true)
  end
end

--- Redraw what shows the queue: the editor, the chat's and the input's winbars.
function Q:refresh()
  self:_draw()
  winbar.refresh(self.session)
end

return M
