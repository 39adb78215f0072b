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
local M = {}

local api = vim.api

--- Delay before re-rendering tool blocks after output (coalesces bursts).
local REFRESH_MS = 50

--- Lines of the buffer scanned from the end for the transcript tail.
local SCAN_LINES = 200

local by_buf = {} ---@type table<integer, table> terminal buffer -> terminal
local did_autocmds = false

local function tail_lines()
  local cfg = require("acp.config").options.terminal or {}
  return cfg.tail_lines or 5
end

--- The terminals of session s, by id (created on first use).
---@param s table session
---@return table<string, table>
function M.store(s)
  if not s.terminals then
    s.terminals = {}
    s.terminal_order = {}
    if s.transcript then
      s.transcript.terminals = s.terminals
    end
  end
  return s.terminals
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
            M._resize(t, win)
          end
        end
      end
    end,
  })
  -- A session that ends takes its commands with it: stop showing them as running.
  api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AcpState",
    callback = function(ev)
      local st = ev.data or {}
      if st.state ~= "closed" and st.state ~= "error" then
        return
      end
      local s = require("acp")._session(st.key)
      for _, t in pairs(s and s.terminals or {}) do
        if t.running then
          t.running = false
          t.ended = true
          M._changed(s, t)
        end
      end
    end,
  })
end

-- Make a terminal (buffer and channel) for id.
local function new_terminal(s, id, opts)
  setup_autocmds()
  local store = M.store(s)
  local t = {
    id = id,
    session = s.key,
    sid = s.sid,
    command = opts.command,
    cwd = opts.cwd,
    readonly = opts.readonly or false,
    running = true,
  }
  local buf = api.nvim_create_buf(false, true)
  pcall(api.nvim_buf_set_name, buf, ("acp://terminal/%d/%s"):format(s.key, id))
  local on_input
  if not t.readonly then
    on_input = function(_, _, _, data)
      M.input(t, data)
    end
  end
  -- nvim_open_term sizes the terminal after the current window.
  t.chan = api.nvim_open_term(buf, { on_input = on_input })
  t.buf = buf
  vim.bo[buf].bufhidden = "hide"
  vim.b[buf].acp_session = s.key
  vim.b[buf].acp_terminal = id
  vim.keymap.set("n", "q", function()
    if #api.nvim_list_wins() > 1 then
      api.nvim_win_close(0, false)
    end
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
    return normal > 1 and [[<C-\><C-n><cmd>close<cr>]] or [[<C-\><C-n>]]
  end, { buffer = buf, expr = true, nowait = true, desc = "acp: close the ended terminal's window" })
  by_buf[buf] = t
  store[id] = t
  table.insert(s.terminal_order, id)
  return t
end

--- The terminal id of session s (or nil).
---@param s table session
---@param id string
---@return table|nil
function M.get(s, id)
  return s.terminals and s.terminals[id] or nil
end

--- Ids of session s's terminals, oldest first.
---@param s table session
---@return string[]
function M.ids(s)
  return s and s.terminal_order and vim.deepcopy(s.terminal_order) or {}
end

--- Send keystrokes typed into a live view to its command.
---@param t table terminal
---@param data string
function M.input(t, data)
  if t.readonly or not t.running or not t.sid then
    return
  end
  pcall(require("acp.host").notify, "acp_terminal_input", t.sid, t.id, data)
end

function M._resize(t, win)
  if t.readonly or not t.running or not t.sid then
    return
  end
  local info = vim.fn.getwininfo(win)[1] or {}
  local cols = api.nvim_win_get_width(win) - (info.textoff or 0)
  local rows = api.nvim_win_get_height(win)
  if rows > 0 and cols > 0 and (rows ~= t.rows or cols ~= t.cols) then
    t.rows, t.cols = rows, cols
    pcall(require("acp.host").notify, "acp_terminal_resize", t.sid, t.id, rows, cols)
  end
end

-- Feed data to the view.
local function feed(t, data)
  if data ~= "" and t.chan then
    t.fed = true
    pcall(api.nvim_chan_send, t.chan, data)
  end
end

--- Handle a host event: terminal, terminal_output or terminal_exit.
---@param s table session
---@param ev table
function M.event(s, ev)
  if ev.type == "terminal" then
    local t = M.get(s, ev.id)
    if t then
      t.command, t.cwd = ev.command, ev.cwd
    else
      t = new_terminal(s, ev.id, { command = ev.command, cwd = ev.cwd })
    end
    M._changed(s, t)
  elseif ev.type == "terminal_output" then
    local t = M.get(s, ev.kind)
    if t then
      feed(t, ev.text or "")
      M._changed(s, t)
    end
  elseif ev.type == "terminal_exit" then
    local t = M.get(s, ev.id)
    if not t or not t.running then
      return
    end
    t.running = false
    if ev.released then
      t.released = true
    else
      t.exit_code, t.signal = ev.exit_code, ev.signal
    end
    M._changed(s, t)
  end
end

-- Output captured without a PTY has bare "\n": a terminal needs "\r\n".
local function crlf(data)
  return (data:gsub("\r?\n", "\r\n"))
end

--- Apply the terminal `_meta` of a tool_call / tool_call_update (agents
--- that run commands themselves). Such terminals are read-only.
---@param s table session
---@param u table the update
function M.from_update(s, u)
  local meta = u._meta
  -- A read-only terminal learns its command from later updates (agents send
  -- a bare tool_call first) and ends with its tool call when no
  -- terminal_exit comes (rejected, failed or cancelled commands).
  local known = type(u.toolCallId) == "string" and M.get(s, u.toolCallId)
  if known and known.readonly then
    local raw = type(u.rawInput) == "table" and u.rawInput or {}
    local cmd = require("acp.rules").command_line(raw.command)
    if type(cmd) == "string" and cmd ~= "" and cmd ~= known.command then
      known.command = cmd
      M._changed(s, known)
    end
  end
  if type(meta) == "table" then
    M._from_meta(s, u, meta)
  end
  -- After terminal_exit had its chance to record the exit status.
  local t = type(u.toolCallId) == "string" and M.get(s, u.toolCallId)
  local done = u.status == "completed" or u.status == "failed" or u.status == "cancelled"
  if t and t.readonly and done then
    -- Quick commands: codex streams no terminal_output, the output is only
    -- in rawOutput (of this update or an earlier one).
    if not t.fed then
      local tr = require("acp.transcript")
      local b = s.transcript and s.transcript.tools[u.toolCallId]
      local text = tr.raw_output_text(u.rawOutput) or (b and b.data and tr.raw_output_text(b.data.rawOutput))
      if text then
        feed(t, crlf(text))
        M._changed(s, t)
      end
    end
    if t.running then
      t.running = false
      M._changed(s, t)
    end
  end
end

function M._from_meta(s, u, meta)
  local function term(id)
    id = id or u.toolCallId
    if type(id) ~= "string" or id == "" then
      return nil
    end
    local t = M.get(s, id)
    if not t then
      local raw = type(u.rawInput) == "table" and u.rawInput or {}
      local cmd = require("acp.rules").command_line(raw.command)
      t = new_terminal(s, id, { readonly = true, command = type(cmd) == "string" and cmd or (type(u.title) == "string" and u.title or nil) })
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
        feed(t, crlf(out.data))
        M._changed(s, t)
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
      M._changed(s, t)
    end
  end
end

--- The last non-blank lines of terminal t's screen (escape sequences
--- already interpreted by the terminal).
---@param t table terminal
---@param n integer|nil how many (default: terminal.tail_lines, 5)
---@return string[]
function M.tail(t, n)
  n = n or tail_lines()
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

--- A short status: "running", "exit 3", "SIGKILL", "released", "ended".
---@param t table terminal
---@return string
function M.status(t)
  if t.running then
    return "running"
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
---@param store table|nil the session's terminals (transcript.terminals)
---@return string[]
function M.content_lines(c, store)
  local id = c.terminalId or "?"
  local t = store and store[id]
  if not t then
    return { ("[terminal %s] (no output yet)"):format(id) }
  end
  local lines = { ("[terminal %s] (%s) <CR> to open"):format(id, M.status(t)) }
  if t.command and t.command ~= "" then
    lines[#lines + 1] = "$ " .. require("acp.transcript").one_line(t.command)
  end
  for _, l in ipairs(M.tail(t)) do
    lines[#lines + 1] = "  " .. l
  end
  return lines
end

-- Tool blocks of s showing terminal id.
local function blocks_showing(s, id)
  local out = {}
  for tcid, b in pairs(s.transcript and s.transcript.tools or {}) do
    for _, c in ipairs(b.data and b.data.content or {}) do
      if c.type == "terminal" and c.terminalId == id then
        out[#out + 1] = tcid
        break
      end
    end
  end
  return out
end

--- Note that terminal t changed: its tool blocks and window bars are
--- refreshed once after REFRESH_MS (the terminal buffer itself updates
--- asynchronously after nvim_chan_send).
---@param s table session
---@param t table terminal
function M._changed(s, t)
  s.terminal_dirty = s.terminal_dirty or {}
  s.terminal_dirty[t.id] = true
  if s.terminal_timer then
    return
  end
  s.terminal_timer = true
  vim.defer_fn(function()
    s.terminal_timer = nil
    local dirty = s.terminal_dirty
    s.terminal_dirty = {}
    for id in pairs(dirty) do
      local term = M.get(s, id)
      if term then
        M._winbar(term)
      end
      for _, tcid in ipairs(blocks_showing(s, id)) do
        local ok, err = pcall(s.transcript.tool, s.transcript, { toolCallId = tcid })
        if not ok then
          vim.notify("acp: terminal view: " .. tostring(err), vim.log.levels.ERROR)
        end
      end
    end
  end, REFRESH_MS)
end

function M._winbar(t)
  if not (t.buf and api.nvim_buf_is_valid(t.buf)) then
    return
  end
  local bar = ("%s%s (%s)"):format(t.readonly and "[read-only] " or "", (require("acp.transcript").one_line(t.command or t.id):gsub("%%", "%%%%")), M.status(t))
  bar = bar:gsub("%%", "%%%%")
  for _, win in ipairs(vim.fn.win_findbuf(t.buf)) do
    vim.wo[win].winbar = bar
  end
end

-- A window to split for the terminal: the previous non-chat window.
local function target_window(s)
  local chat = { [s.chat_buf or -1] = true, [s.input_buf or -1] = true }
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

--- Show terminal id of session s in a window (focusing it when already
--- visible), split below the previous window, or below everything.
---@param s table session
---@param id string
---@return integer|nil window
function M.open(s, id)
  local t = M.get(s, id)
  if not t or not api.nvim_buf_is_valid(t.buf) then
    vim.notify(("acp: no terminal %s"):format(tostring(id)), vim.log.levels.WARN)
    return nil
  end
  local win = vim.fn.win_findbuf(t.buf)[1]
  if win and api.nvim_win_get_tabpage(win) == api.nvim_get_current_tabpage() then
    api.nvim_set_current_win(win)
    return win
  end
  local target = target_window(s)
  if target then
    api.nvim_set_current_win(target)
    vim.cmd("belowright 15split")
  else
    vim.cmd("botright 15split")
  end
  require("acp.chat").unfix()
  win = api.nvim_get_current_win()
  api.nvim_win_set_buf(win, t.buf)
  for opt, v in pairs({ number = false, relativenumber = false, signcolumn = "no", foldcolumn = "0", spell = false }) do
    vim.wo[win][opt] = v
  end
  M._winbar(t)
  pcall(api.nvim_win_set_cursor, win, { api.nvim_buf_line_count(t.buf), 0 })
  M._resize(t, win)
  return win
end

--- The terminal of the tool call under the cursor in the transcript, if any.
---@param s table session
---@return string|nil id
function M.at_cursor(s)
  if not (s.transcript and s.transcript.block_at) then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local b = s.transcript:block_at(row)
  if not b or b.kind ~= "tool" then
    return nil
  end
  local found
  for _, c in ipairs(b.data and b.data.content or {}) do
    if c.type == "terminal" and c.terminalId and M.get(s, c.terminalId) then
      found = found or c.terminalId
    end
  end
  return found
end

--- <CR> in the transcript: open the terminal under the cursor. Returns
--- true when there was one.
---@param s table session
---@return boolean
function M.activate(s)
  local id = M.at_cursor(s)
  if not id then
    return false
  end
  return M.open(s, id) ~= nil
end

--- :AcpTerminal [id]: open a terminal of the current session (default:
--- the newest).
---@param arg string|nil
function M.command(arg)
  local s = require("acp")._session()
  if not s then
    vim.notify("acp: no session", vim.log.levels.WARN)
    return
  end
  local ids = M.ids(s)
  local id = (arg and arg ~= "") and arg or ids[#ids]
  if not id then
    vim.notify("acp: the agent has not run any command yet", vim.log.levels.INFO)
    return
  end
  M.open(s, id)
end

--- Completion for :AcpTerminal.
function M.complete()
  return M.ids(require("acp")._session())
end

return M
