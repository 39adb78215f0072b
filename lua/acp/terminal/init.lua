--- Live terminals: the commands an agent runs, shown as they run.
---
--- Two sources feed them:
--- - terminal/create through the host: host events `terminal` (created),
---   `terminal_output` (raw PTY bytes, one event per stream per frame) and
---   `terminal_exit`; keystrokes typed into the view go back to the command.
--- - agents that run commands themselves (claude-agent-acp, codex): tool call
---   `_meta` terminal_info / terminal_output / terminal_output_delta /
---   terminal_exit; those views are read-only.
---
--- Each terminal is a buffer fed through `nvim_open_term`, so colours and
--- cursor movement render as in a real terminal. Tool call blocks whose
--- content is `{ type = "terminal", terminalId }` show its status and last
--- lines (read from that buffer, refreshed at most once per REFRESH_MS).
---
--- Each session owns one acp.Terminals; it writes only its own fields and
--- tells its owner through on_change which terminal to draw again.
---
--- Views are bounded: at most terminal.max_views per session, each keeping
--- terminal.scrollback lines. A new terminal takes the view of the oldest
--- finished one (closed); when every view is still running it gets none
--- (its block says so); the owner hears of it once (on_notice).
local config = require("acp.config")
local host = require("acp.host")
local layout = require("acp.layout")
local notify = require("acp.notify")
local rules = require("acp.rules")
local termsafe = require("acp.terminal.termsafe")
local texts = require("acp.text")

local M = {}

local api = vim.api

--- Delay before re-rendering tool blocks after output (coalesces bursts).
local REFRESH_MS = 50

--- Lines of the buffer scanned from the end for the transcript tail.
local SCAN_LINES = 200

local by_buf = {} ---@type table<integer, acp.Terminal> terminal buffer -> terminal
local did_autocmds = false

---@class acp.Terminal
---@field id string terminalId (or the toolCallId of an agent's own command)
---@field session integer key of the session
---@field sid integer|nil host session id (input and resize go there)
---@field command string|nil the command line shown
---@field cwd string|nil
---@field readonly boolean the agent ran it itself: no input
---@field running boolean
---@field ended boolean|nil the session ended while it ran
---@field released boolean|nil
---@field cancelled boolean|nil stopped with a turn the user cancelled
---@field exit_code integer|nil
---@field signal string|nil
---@field blocked string[]|nil what the sandbox denied the command, as its output shows it
---@field outside string|nil why the command ran outside the sandbox
---@field buf integer|nil the terminal buffer (nil: no view, see no_view)
---@field chan integer|nil its nvim_open_term channel
---@field no_view "closed"|"none"|nil why there is no view: closed for a newer one, or never had one
---@field last_lines string[]|nil its last lines when its view was closed
---@field fed boolean|nil some output was shown
---@field undrawn boolean|nil output was fed that the terminal may not have drawn into its buffer yet
---@field safe acp.TermSafe|nil what acp.terminal.termsafe carries between chunks
---@field rows integer|nil size last sent to the host
---@field cols integer|nil

---@class acp.Terminals
---@field key integer session key (buffer names)
---@field sid integer|nil host session id, once known
---@field by_id table<string, acp.Terminal>
---@field order string[] ids, oldest first
---@field dirty table<string, true> terminals to draw again
---@field timer boolean|nil a refresh is scheduled
---@field on_change fun(id: string)|nil called when terminal id's output or status changed
---@field on_notice fun(text: string)|nil told once when views are closed or not made (terminal.max_views)
---@field noticed boolean|nil on_notice was called
local Terminals = {}
Terminals.__index = Terminals

--- The terminals of a session.
---@param key integer the session's key
---@param on_change fun(id: string)|nil
---@param on_notice fun(text: string)|nil
---@return acp.Terminals
function M.new(key, on_change, on_notice)
  return setmetatable(
    { key = key, by_id = {}, order = {}, dirty = {}, on_change = on_change, on_notice = on_notice },
    Terminals
  )
end

local function setup_autocmds()
  if did_autocmds then
    return
  end
  did_autocmds = true
  local group = api.nvim_create_augroup("acp_terminal", { clear = true })
  -- Keep the command's window size in step with the view's.
  api.nvim_create_autocmd({ "WinResized", "BufWinEnter" }, {
    group = group,
    callback = function(ev)
      local wins = ev.event == "WinResized" and (vim.v.event.windows or {}) or { api.nvim_get_current_win() }
      for _, win in ipairs(wins) do
        if api.nvim_win_is_valid(win) then
          local t = by_buf[api.nvim_win_get_buf(win)]
          if t then
            M.resize(t, win)
          end
        end
      end
    end,
  })
end

--- Set the host session id (input and resizes of terminals made from now on go there).
---@param sid integer|nil
function Terminals:set_sid(sid)
  self.sid = sid
end

--- The user cancelled the turn: its running commands are stopped with it,
--- and say so rather than "released" or a signal's name.
function Terminals:cancelled()
  for _, t in pairs(self.by_id) do
    if t.running then
      t.cancelled = true
    end
  end
end

--- The session ended: its commands are gone, stop showing them as running.
function Terminals:end_all()
  for _, t in pairs(self.by_id) do
    if t.running then
      t.running = false
      t.ended = true
      self:_changed(t)
    end
  end
end

-- Close the view of terminal t (its buffer goes; the terminal stays known).
function Terminals:_close_view(t)
  local buf = t.buf
  t.last_lines = M.tail(t) -- the block keeps showing them
  t.buf, t.chan, t.no_view = nil, nil, "closed"
  if buf then
    by_buf[buf] = nil
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
  self:_changed(t)
end

-- Whether a new view may be made: under terminal.max_views, or after
-- closing the oldest finished view not shown in a window. Tells the owner
-- once when the limit is reached.
function Terminals:_room()
  local max = config.options.terminal.max_views
  local views, oldest_done = 0, nil
  for _, id in ipairs(self.order) do
    local t = self.by_id[id]
    if t.buf then
      views = views + 1
      -- One you are looking at stays.
      if not t.running and not oldest_done and #vim.fn.win_findbuf(t.buf) == 0 then
        oldest_done = t
      end
    end
  end
  if views < max then
    return true
  end
  if not self.noticed and self.on_notice then
    self.noticed = true
    self.on_notice(
      ("This chat keeps at most %d terminal views (terminal.max_views): the oldest finished ones close for new ones, and a command that finds all %d still running gets none (the agent still gets its output)."):format(
        max,
        max
      )
    )
  end
  if oldest_done then
    self:_close_view(oldest_done)
    return true
  end
  return false
end

-- Make a terminal for id, with a view (buffer and channel) when there is room.
function Terminals:_new(id, opts)
  setup_autocmds()
  local t = {
    id = id,
    session = self.key,
    sid = self.sid,
    command = opts.command,
    cwd = opts.cwd,
    readonly = opts.readonly or false,
    running = true,
  }
  self.by_id[id] = t
  table.insert(self.order, id)
  if not self:_room() then
    t.no_view = "none"
    return t
  end
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, ("acp://terminal/%d/%s"):format(self.key, id))
  local on_input
  if not t.readonly then
    on_input = function(_, _, _, data)
      M.input(t, data)
    end
  end
  -- nvim_open_term sizes the terminal after the current window (at 80x24,
  -- the 37-column chat): made in a hidden float as wide as the editor (up
  -- to 120 columns), so output is cut into lines by the command's own
  -- width, not the chat's.
  local width = math.max(M.min_cols(), math.min(vim.o.columns, 120)) -- 120: the host's default
  local ok, float = pcall(api.nvim_open_win, buf, false, {
    relative = "editor",
    row = 0,
    col = 0,
    width = width,
    height = 24,
    hide = true,
    noautocmd = true,
    style = "minimal",
  })
  if ok then
    api.nvim_win_call(float, function()
      t.chan = api.nvim_open_term(buf, { on_input = on_input })
    end)
    api.nvim_win_close(float, true)
  else
    t.chan = api.nvim_open_term(buf, { on_input = on_input })
  end
  t.buf = buf
  pcall(function()
    vim.bo[buf].scrollback = config.options.terminal.scrollback
  end)
  if not t.readonly and t.sid then
    -- The command's width from its start (the host made it 120).
    t.rows, t.cols = 24, width
    pcall(host.notify, "acp_terminal_resize", t.sid, id, t.rows, t.cols)
  end
  -- The terminal draws into its buffer after nvim_chan_send has returned,
  -- on a timer of its own (later still on a busy machine): views refresh
  -- when it has drawn, so the last lines shown are the last lines drawn.
  api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if t.buf ~= buf then
        return true -- the view was closed: detach
      end
      t.undrawn = nil
      self:_changed(t)
    end,
  })
  vim.bo[buf].bufhidden = "hide"
  vim.b[buf].acp_session = self.key
  vim.b[buf].acp_terminal = id
  vim.keymap.set("n", "q", function()
    M.close_view()
  end, { buffer = buf, nowait = true, silent = true, desc = "acp: close the terminal window" })
  -- In terminal mode "q" is typed into a running command; once it has ended
  -- (or the terminal is read-only) it closes the window, as in normal mode.
  vim.keymap.set("t", "q", function()
    if t.running and not t.readonly then
      return "q"
    end
    local normal = 0
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_config(w).relative == "" then
        normal = normal + 1
      end
    end
    if normal > 1 then
      vim.schedule(M.close_view) -- once out of terminal mode
    end
    return [[<C-\><C-n>]]
  end, { buffer = buf, expr = true, nowait = true, desc = "acp: close the ended terminal's window" })
  by_buf[buf] = t
  return t
end

--- Close the current window (a terminal view) and go back to the window
--- it was opened from (the chat, for a terminal opened there).
function M.close_view()
  if #api.nvim_list_wins() <= 1 then
    return
  end
  local back = vim.w.acp_opened_from
  api.nvim_win_close(0, false)
  if back and api.nvim_win_is_valid(back) and api.nvim_win_get_tabpage(back) == api.nvim_get_current_tabpage() then
    api.nvim_set_current_win(back)
  end
end

--- The terminal id (or nil).
---@param id string
---@return acp.Terminal|nil
function Terminals:get(id)
  return self.by_id[id]
end

--- Ids of the terminals, oldest first.
---@return string[]
function Terminals:ids()
  return vim.deepcopy(self.order)
end

--- Send keystrokes typed into a live view to its command.
---@param t acp.Terminal
---@param data string
function M.input(t, data)
  if t.readonly or not t.running or not t.sid then
    return
  end
  pcall(host.notify, "acp_terminal_input", t.sid, t.id, data)
end

--- The narrowest a command's terminal is: 80 columns, or the editor's
--- width when it is narrower. A window narrower than that wraps the
--- output; the command never writes for fewer columns.
---@return integer
function M.min_cols()
  return math.max(1, math.min(80, vim.o.columns))
end

--- Tell the command its window's size (when it changed), never narrower
--- than M.min_cols().
---@param t acp.Terminal
---@param win integer
function M.resize(t, win)
  if t.readonly or not t.running or not t.sid then
    return
  end
  local info = vim.fn.getwininfo(win)[1] or {}
  local cols = math.max(api.nvim_win_get_width(win) - (info.textoff or 0), M.min_cols())
  local rows = api.nvim_win_get_height(win)
  if rows > 0 and cols > 0 and (rows ~= t.rows or cols ~= t.cols) then
    t.rows, t.cols = rows, cols
    pcall(host.notify, "acp_terminal_resize", t.sid, t.id, rows, cols)
  end
end

-- Feed data to the view, without the control strings that would reach
-- past it (acp.terminal.termsafe: hyperlinks, clipboard writes, ...).
--- Home, clear the screen, clear the scrollback.
local CLEAR = "\27[H\27[2J\27[3J"

local function feed(t, data)
  if data ~= "" and t.chan then
    t.fed = true
    t.safe = t.safe or termsafe.new()
    data = termsafe.filter(t.safe, data)
    if data ~= "" then
      t.undrawn = true
      pcall(api.nvim_chan_send, t.chan, data)
    end
  end
end

--- terminal/create ran a command (host event `terminal`).
---@param id string
---@param command string|nil
---@param cwd string|nil
---@param outside string|nil why it runs outside the sandbox (when it should not)
function Terminals:created(id, command, cwd, outside)
  local t = self:get(id)
  if t then
    t.command, t.cwd = command, cwd
  else
    t = self:_new(id, { command = command, cwd = cwd })
  end
  t.outside = type(outside) == "string" and outside or nil
  self:_changed(t)
end

--- Raw PTY output of terminal id (host event `terminal_output`).
---@param id string
---@param data string
function Terminals:output(id, data)
  local t = self:get(id)
  if t then
    feed(t, data)
    self:_changed(t)
  end
end

--- Terminal id ended (host event `terminal_exit`): an exit code, a signal,
--- or released by the agent before it ended.
---@param id string
---@param ev { exit_code: integer|nil, signal: string|nil, released: boolean|nil, blocked: string[]|nil }
function Terminals:exited(id, ev)
  local t = self:get(id)
  if not t or not t.running then
    return
  end
  t.running = false
  if ev.released then
    t.released = true
  else
    t.exit_code, t.signal = ev.exit_code, ev.signal
  end
  if type(ev.blocked) == "table" then
    t.blocked = vim.tbl_filter(function(b)
      return type(b) == "string"
    end, ev.blocked)
  end
  self:_changed(t)
end

-- Output captured without a PTY has bare "\n": a terminal needs "\r\n".
local function crlf(data)
  return (data:gsub("\r?\n", "\r\n"))
end

--- Apply the terminal `_meta` of a tool_call / tool_call_update (agents
--- that run commands themselves). Such terminals are read-only.
---@param u table the update
---@param raw_output_text fun(raw: any): string|nil the text of a rawOutput
---@param before table|nil the tool call's fields before this update
function Terminals:from_update(u, raw_output_text, before)
  local meta = u._meta
  -- A read-only terminal learns its command from later updates (agents send
  -- a bare tool_call first) and ends with its tool call when no
  -- terminal_exit comes (rejected, failed or cancelled commands).
  local known = type(u.toolCallId) == "string" and self:get(u.toolCallId)
  if known and known.readonly then
    local cmd = rules.command(u)
    if cmd and cmd ~= "" and cmd ~= known.command then
      known.command = cmd
      self:_changed(known)
    end
  end
  if type(meta) == "table" then
    self:_from_meta(u, meta)
  end
  -- After terminal_exit had its chance to record the exit status.
  local t = type(u.toolCallId) == "string" and self:get(u.toolCallId)
  local done = u.status == "completed" or u.status == "failed" or u.status == "cancelled"
  if t and t.readonly and done then
    -- Quick commands: codex streams no terminal_output, the output is only
    -- in rawOutput (of this update or an earlier one).
    if not t.fed then
      local text = raw_output_text(u.rawOutput) or (before and raw_output_text(before.rawOutput))
      if text then
        feed(t, crlf(text))
        self:_changed(t)
      end
    end
    if t.running then
      t.running = false
      self:_changed(t)
    end
  end
end

function Terminals:_from_meta(u, meta)
  local function term(id)
    id = id or u.toolCallId
    if type(id) ~= "string" or id == "" then
      return nil
    end
    local t = self:get(id)
    if not t then
      local cmd = rules.command(u)
      t = self:_new(id, {
        readonly = true,
        command = type(cmd) == "string" and cmd or (type(u.title) == "string" and u.title or nil),
      })
    end
    return t
  end
  local info = meta.terminal_info
  if type(info) == "table" then
    local t = term(info.terminal_id)
    if t and info.cwd then
      t.cwd = info.cwd
    end
  end
  for _, key in ipairs({ "terminal_output", "terminal_output_delta" }) do
    local out = meta[key]
    if type(out) == "table" and type(out.data) == "string" then
      local t = term(out.terminal_id)
      if t then
        if out.replace and t.fed then
          -- A snapshot of the whole output (ACP v2's terminal_update) after
          -- streamed chunks: the screen and scrollback cleared first.
          -- (Neovim 0.10 keeps the scrollback's lines, blanked.)
          feed(t, CLEAR)
        end
        feed(t, crlf(out.data))
        self:_changed(t)
      end
    end
  end
  local exit = meta.terminal_exit
  if type(exit) == "table" then
    local t = term(exit.terminal_id)
    if t and t.running then
      t.running = false
      t.exit_code = type(exit.exit_code) == "number" and exit.exit_code or nil
      t.signal = type(exit.signal) == "string" and exit.signal or nil
      self:_changed(t)
    end
  end
end

--- Wait, at most ms (default 1000), until terminal t has drawn the output
--- fed to it: Neovim's terminal draws into its buffer on a timer after
--- nvim_chan_send returned (10 ms, later on a busy machine), so lines read
--- at once may lack the last output. Output that changed no line (a bare
--- escape sequence) waits out the bound, its lines right all the same.
--- Not from a fast event (vim.wait).
---@param t acp.Terminal
---@param ms integer|nil
function M.drawn(t, ms)
  if t.undrawn and t.buf and api.nvim_buf_is_valid(t.buf) then
    vim.wait(ms or 1000, function()
      return not t.undrawn
    end, 5)
  end
end

--- The last non-blank lines of terminal t's screen (escape sequences
--- already interpreted by the terminal).
---@param t acp.Terminal
---@param n integer|nil how many (default: the terminal.tail_lines option)
---@return string[]
function M.tail(t, n)
  n = n or config.options.terminal.tail_lines
  if not (t.buf and api.nvim_buf_is_valid(t.buf)) then
    return {}
  end
  local count = api.nvim_buf_line_count(t.buf)
  local lines = api.nvim_buf_get_lines(t.buf, math.max(0, count - SCAN_LINES), count, false)
  local last = #lines
  while last > 0 and lines[last]:match("^%s*$") do
    last = last - 1
  end
  local out = {}
  for i = math.max(1, last - n + 1), last do
    out[#out + 1] = (lines[i]:gsub("%s+$", ""))
  end
  return out
end

--- A short status: "running", "exit 3", "SIGKILL", "cancelled", "released",
--- "ended".
---@param t acp.Terminal
---@return string
function M.status(t)
  if t.running then
    return "running"
  elseif t.cancelled and not t.exit_code then
    return t.signal and ("cancelled: " .. t.signal) or "cancelled"
  elseif t.exit_code then
    return "exit " .. math.floor(t.exit_code)
  elseif t.signal then
    return t.signal
  elseif t.released then
    return "released"
  end
  return "ended"
end

--- Transcript lines for a terminal content block.
---@param c table `{ type = "terminal", terminalId }`
---@return string[]
function Terminals:content_lines(c)
  local id = c.terminalId or "?"
  local t = self:get(id)
  if not t then
    return { ("[terminal %s] (no output yet)"):format(id) }
  end
  if t.no_view then
    local why = t.no_view == "closed" and "view closed for newer ones" or "no view: too many running"
    local lines = { ("[terminal %s] (%s) %s (terminal.max_views)"):format(id, M.status(t), why) }
    if t.command and t.command ~= "" then
      lines[#lines + 1] = "$ " .. texts.one_line(t.command)
    end
    for _, l in ipairs(t.last_lines or {}) do
      lines[#lines + 1] = "  " .. l
    end
    return lines
  end
  local lines = { ("[terminal %s] (%s) <CR> to open"):format(id, M.status(t)) }
  if t.command and t.command ~= "" then
    lines[#lines + 1] = "$ " .. texts.one_line(t.command)
  end
  if t.outside then
    lines[#lines + 1] = "! " .. texts.one_line(t.outside)
  end
  for _, l in ipairs(M.tail(t)) do
    lines[#lines + 1] = "  " .. l
  end
  -- What the sandbox denied, each on its own line under the output.
  for _, b in ipairs(t.blocked or {}) do
    lines[#lines + 1] = "! " .. texts.one_line(b)
  end
  return lines
end

--- Note that terminal t changed: its window bars and its owner's views
--- (on_change) are refreshed once after REFRESH_MS (the terminal buffer
--- itself updates asynchronously after nvim_chan_send).
---@param t acp.Terminal
function Terminals:_changed(t)
  self.dirty[t.id] = true
  if self.timer then
    return
  end
  self.timer = true
  vim.defer_fn(function()
    self.timer = nil
    local dirty = self.dirty
    self.dirty = {}
    for id in pairs(dirty) do
      local term = self:get(id)
      if term then
        M.winbar(term)
      end
      if self.on_change then
        local ok, err = pcall(self.on_change, id)
        if not ok then
          notify("acp: terminal view: " .. tostring(err), vim.log.levels.ERROR)
        end
      end
    end
  end, REFRESH_MS)
end

--- Show t's command and status in the winbar of its windows.
---@param t acp.Terminal
function M.winbar(t)
  if not (t.buf and api.nvim_buf_is_valid(t.buf)) then
    return
  end
  local bar = ("%s%s (%s)"):format(
    t.readonly and "[read-only] " or "",
    texts.statusline(t.command or t.id),
    M.status(t)
  )
  for _, win in ipairs(vim.fn.win_findbuf(t.buf)) do
    vim.wo[win].winbar = bar
  end
end

-- A window to split for the terminal: the previous window unless it shows
-- one of the chat's buffers (chat_bufs), else any such window.
local function target_window(chat_bufs)
  local chat = {}
  for _, b in ipairs(chat_bufs) do
    chat[b] = true
  end
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and not chat[api.nvim_win_get_buf(prev)] and api.nvim_win_get_config(prev).relative == "" then
    return prev
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if not chat[api.nvim_win_get_buf(win)] and api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
end

--- Show terminal id in a window (focusing it when already visible), split
--- below the previous window (not one of chat_bufs'), or below everything.
---@param id string
---@param chat_bufs integer[] the session's chat and input buffers
---@return integer|nil window
function Terminals:open(id, chat_bufs)
  local t = self:get(id)
  if t and t.no_view then
    notify(
      ("acp: terminal %s has no view (%s; terminal.max_views)"):format(
        id,
        t.no_view == "closed" and "closed for newer ones" or "too many were running"
      ),
      vim.log.levels.WARN
    )
    return nil
  end
  if not t or not (t.buf and api.nvim_buf_is_valid(t.buf)) then
    notify(("acp: no terminal %s"):format(tostring(id)), vim.log.levels.WARN)
    return nil
  end
  local win = vim.fn.win_findbuf(t.buf)[1]
  if win and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage() then
    api.nvim_set_current_win(win)
    return win
  end
  local from = api.nvim_get_current_win()
  local target = target_window(chat_bufs)
  -- Below the previous window when it is wide enough for the command's
  -- lines, else across the whole editor (at 80x24 the editing window beside
  -- the chat has 42 columns).
  if target and api.nvim_win_get_width(target) >= M.min_cols() then
    api.nvim_set_current_win(target)
    vim.cmd("belowright 15split")
  else
    vim.cmd("botright 15split")
  end
  layout.unfix()
  win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, t.buf)
  vim.w[win].acp_opened_from = from -- q goes back there
  for opt, v in pairs({ number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0", spell = false }) do
    vim.wo[win][opt] = v
  end
  M.winbar(t)
  pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(t.buf), 0 })
  M.resize(t, win)
  return win
end

--- The first known terminal shown by a tool call, if any.
---@param tc table|nil the tool call's fields
---@return string|nil id
function Terminals:shown_by(tc)
  for _, c in ipairs(tc and type(tc.content) == "table" and tc.content or {}) do
    if type(c) == "table" and c.type == "terminal" and c.terminalId and self:get(c.terminalId) then
      return c.terminalId
    end
  end
end

return M
