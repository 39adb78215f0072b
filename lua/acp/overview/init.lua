--- :AcpSessions: one window listing every session, live and saved, of
--- every agent, for this project (a key shows all projects): its title,
--- agent, state (working; waiting for you, and on what; done; error), for
--- how long, the files it changed (+/-) and the usage its agent reports.
--- Keys open, stop, fork, rename, archive and delete them, or go to the
--- oldest waiting prompt (`keymaps.sessions`; ? lists them). It follows
--- `User AcpState`: the line of the session that changed is drawn again,
--- nothing else.
local attention = require("acp.attention")
local chat = require("acp.chat")
local files = require("acp.files")
local highlights = require("acp.highlights")
local history = require("acp.history")
local history_search = require("acp.history.search")
local keymaps = require("acp.keymaps")
local layout = require("acp.layout")
local notify = require("acp.notify")
local sessions = require("acp.sessions")
local winbar = require("acp.chat.winbar")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_overview")

---@class acp.OverviewRow
---@field s acp.Session|nil a live session
---@field meta acp.HistoryMeta|nil a saved chat (none live on it)

---@class acp.OverviewHandlers
---@field resume fun(meta: acp.HistoryMeta) resume a saved chat (acp.new_session)
---@field fork fun(s: acp.Session) fork a live session (acp.fork)
---@field delete fun(meta: acp.HistoryMeta) delete a saved chat (acp.session.lifecycle)
---@field archive fun(meta: acp.HistoryMeta, on: boolean): boolean|nil the agent's archive, where it has one (true: asked)

local view ---@type { buf: integer, win: integer, rows: acp.OverviewRow[], by_key: table<integer, integer>, all: boolean, archived: boolean, handlers: acp.OverviewHandlers, au: integer, timer: uv.uv_timer_t|nil }|nil

local HEADER = 2 -- lines above the first row
local float_config -- defined below

--- "12s", "5m", "3h", "2d": how long ago t (os.time()) was.
---@param secs integer
---@return string
local function ago(secs)
  secs = math.max(0, secs)
  if secs < 60 then
    return secs .. "s"
  elseif secs < 3600 then
    return math.floor(secs / 60) .. "m"
  elseif secs < 86400 then
    return math.floor(secs / 3600) .. "h"
  end
  return math.floor(secs / 86400) .. "d"
end

--- What live session s is doing: "working", "waiting: permission", "done",
--- "ready", "error", "stopped", "starting".
---@param s acp.Session
---@return string
function M.state(s)
  local on = attention.waits_on(s)
  if on then
    return "waiting: " .. (({ fs_question = "file", elicitation = "question", mention = "files" })[on] or on)
  end
  if s.state == "busy" then
    return "working"
  elseif s.state == "ready" then
    return s.stop_reason and "done" or "ready"
  elseif s.state == "closed" then
    return "stopped"
  end
  return s.state
end

--- The lines added and removed in the files s's tools changed: "+12/-3",
--- or "" when it changed none.
---@param s acp.Session
---@return string
function M.changes(s)
  local add, del = 0, 0
  for _, c in ipairs(s.tool_changes or {}) do
    local buf = vim.fn.bufnr(c.path)
    local now = buf > 0
        and api.nvim_buf_is_loaded(buf)
        and table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
      or files.read(c.path)
      or ""
    local ok, hunks = pcall(vim.diff, c.original or "", now, { result_type = "indices" })
    for _, h in ipairs(ok and hunks or {}) do
      del, add = del + h[2], add + h[4]
    end
  end
  if #(s.tool_changes or {}) == 0 then
    return ""
  end
  return ("%df +%d/-%d"):format(#s.tool_changes, add, del)
end

--- The usage s's agent reported: "ctx 40% 0.12 USD", "12k tok", or "".
---@param s acp.Session
---@return string
local function usage(s)
  local u, out = s.usage, {}
  if type(u) == "table" and tonumber(u.used) and tonumber(u.size) and tonumber(u.size) > 0 then
    out[#out + 1] = ("ctx %d%%"):format(math.floor(100 * tonumber(u.used) / tonumber(u.size) + 0.5))
    if type(u.cost) == "table" and tonumber(u.cost.amount) then
      out[#out + 1] = ("%.2f %s"):format(tonumber(u.cost.amount), tostring(u.cost.currency or ""))
    end
  end
  local tu = s.turn_usage
  if #out == 0 and type(tu) == "table" and tonumber(tu.total) then
    out[#out + 1] = winbar.tokens(tonumber(tu.total)) .. " tok"
  end
  return table.concat(out, " ")
end

--- text cut or padded to width display cells.
local function fit(text, width)
  text = tostring(text or ""):gsub("%s+", " ")
  if api.nvim_strwidth(text) > width then
    text = vim.fn.strcharpart(text, 0, math.max(width - 1, 0))
    while api.nvim_strwidth(text) > width - 1 and text ~= "" do
      text = vim.fn.strcharpart(text, 0, vim.fn.strchars(text) - 1)
    end
    text = text .. "…"
  end
  return text .. (" "):rep(width - api.nvim_strwidth(text))
end

--- The cells of row: mark, title, agent, state, how long, changes, usage.
---@param row acp.OverviewRow
---@return string[], string state (for its highlight)
function M.cells(row)
  local s, meta = row.s, row.meta
  if s then
    local here = s == sessions.get() and "*" or " "
    local state = M.state(s)
    return {
      here,
      -- The worktree's branch first: never cut off with a long title.
      (s.worktree and ("[" .. s.worktree.branch .. "] ") or "") .. (s:name(200) or "(no prompt yet)"),
      s:label(),
      state,
      winbar.elapsed(vim.uv.now() - (s.since or vim.uv.now())),
      M.changes(s),
      usage(s),
    },
      state
  end
  local state = meta.archived and "archived" or "saved"
  return {
    " ",
    meta.title or meta.first_prompt or meta.id,
    meta.agent or "?",
    state,
    ago(os.time() - (meta.updated or os.time())),
    "",
    "",
  },
    state
end

--- The line of row for a window width cells wide.
---@param row acp.OverviewRow
---@param width integer
---@return string, string
function M.line(row, width)
  local c, state = M.cells(row)
  -- title takes what the fixed columns leave.
  local fixed = { 12, 19, 6 }
  local tail = vim.trim(table.concat({ c[6], c[7] }, " "))
  local titlew = math.max(12, width - 2 - fixed[1] - fixed[2] - fixed[3] - 4 - math.min(#tail, 24))
  local line = ("%s %s %s %s %s %s"):format(
    c[1],
    fit(c[2], titlew),
    fit(c[3], fixed[1]),
    fit(c[4], fixed[2]),
    fit(c[5], fixed[3]),
    tail
  )
  return (line:gsub("%s+$", "")), state
end

local state_hl = {
  working = "AcpStateBusy",
  done = "AcpStateReady",
  ready = "AcpStateReady",
  error = "AcpStateError",
  stopped = "Comment",
  saved = "Comment",
  archived = "Comment",
}

--- The rows: live sessions first (oldest first), then the saved chats no
--- live session continues, newest first.
---@param all boolean every project's
---@param archived boolean archived saved chats too
---@return acp.OverviewRow[]
function M.rows(all, archived)
  local out, live_ids = {}, {}
  local project = history.project()
  for _, s in ipairs(sessions.list()) do
    if s.history then
      live_ids[s.history.id] = true
    end
    if all or history.session_project(s) == project then
      out[#out + 1] = { s = s }
    end
  end
  for _, meta in ipairs(history.list(all and true or project)) do
    if not live_ids[meta.id] and (archived or not meta.archived) then
      out[#out + 1] = { meta = meta }
    end
  end
  return out
end

local function width()
  return view and api.nvim_win_is_valid(view.win) and api.nvim_win_get_width(view.win) or vim.o.columns
end

--- Highlight the state of row i's line (lnum, 0-based).
local function highlight(lnum, line, state)
  api.nvim_buf_clear_namespace(view.buf, ns, lnum, lnum + 1)
  local hl = state_hl[state] or (state:match("^waiting") and "AcpStateAwaiting") or nil
  local col = line:find(state, 1, true)
  if hl and col then
    api.nvim_buf_set_extmark(view.buf, ns, lnum, col - 1, { end_col = col - 1 + #state, hl_group = hl })
  end
end

--- Draw row i (1-based) of the view again: its line and highlight only.
---@param i integer
local function draw_row(i)
  local line, state = M.line(view.rows[i], width())
  local lnum = HEADER + i - 1
  vim.bo[view.buf].modifiable = true
  api.nvim_buf_set_lines(view.buf, lnum, lnum + 1, false, { line })
  vim.bo[view.buf].modifiable = false
  highlight(lnum, line, state)
end

--- The header: what is listed and the key help.
local function header()
  local help = keymaps.first("sessions", "help")
  local what = view.all and "every project" or vim.fn.fnamemodify(history.project(), ":~")
  local waiting = attention.statusline()
  return {
    ("Sessions of %s%s%s%s"):format(
      what,
      view.archived and ", archived too" or "",
      waiting ~= "" and (" · " .. waiting) or "",
      help and (" · " .. help .. " keys") or ""
    ),
    "",
  }
end

--- Draw everything again (opened, a session came or went, a toggle).
function M.refresh()
  if not (view and api.nvim_buf_is_valid(view.buf)) then
    return
  end
  view.rows = M.rows(view.all, view.archived)
  view.by_key = {}
  local lines, states = header(), {}
  local w = width()
  for i, row in ipairs(view.rows) do
    if row.s then
      view.by_key[row.s.key] = i
    end
    lines[#lines + 1], states[i] = M.line(row, w)
  end
  if #view.rows == 0 then
    lines[#lines + 1] = "No sessions yet: :AcpChat starts one."
  end
  vim.bo[view.buf].modifiable = true
  api.nvim_buf_set_lines(view.buf, 0, -1, false, lines)
  vim.bo[view.buf].modifiable = false
  api.nvim_buf_clear_namespace(view.buf, ns, 0, -1)
  api.nvim_buf_set_extmark(view.buf, ns, 0, 0, { end_col = #lines[1], hl_group = "AcpPermissionTitle" })
  for i in ipairs(view.rows) do
    highlight(HEADER + i - 1, lines[HEADER + i], states[i])
  end
  if api.nvim_win_is_valid(view.win) then
    pcall(api.nvim_win_set_config, view.win, float_config()) -- as tall as its rows
  end
end

--- Session key changed state: its line is drawn again (a session new to
--- the view draws it all).
---@param key integer
function M.changed(key)
  if not (view and api.nvim_buf_is_valid(view.buf)) then
    return
  end
  local i = view.by_key[key]
  local s = sessions.get(key)
  if not i then
    if s and not s.warm and (view.all or history.session_project(s) == history.project()) then
      M.refresh()
    end
    return
  end
  if view.rows[i].s ~= s then
    return M.refresh()
  end
  draw_row(i)
  -- The header counts the sessions waiting.
  vim.bo[view.buf].modifiable = true
  api.nvim_buf_set_lines(view.buf, 0, 1, false, { header()[1] })
  vim.bo[view.buf].modifiable = false
end

--- The row under the cursor.
---@return acp.OverviewRow|nil
local function current()
  if not view or api.nvim_get_current_buf() ~= view.buf then
    return nil
  end
  return view.rows[api.nvim_win_get_cursor(0)[1] - HEADER]
end

--- Close the overview.
function M.close()
  if view and api.nvim_win_is_valid(view.win) then
    pcall(api.nvim_win_close, view.win, true)
  end
end

local function need(row, what)
  if row then
    return row
  end
  notify(("acp: the cursor is on no session to %s"):format(what), vim.log.levels.INFO)
end

--- The actions of the keys, for the row under the cursor.
local actions = {}

function actions.open()
  local row = need(current(), "open")
  if not row then
    return
  end
  M.close()
  if row.s then
    sessions.set_current(row.s)
    chat.show(row.s)
  elseif (row.meta.can_load or row.meta.can_resume) and row.meta.session_id then
    view.handlers.resume(row.meta)
  else
    history.open(row.meta)
  end
end

function actions.stop()
  local row = need(current(), "stop")
  if row and row.s and row.s:alive() then
    row.s:stop()
  elseif row then
    notify("acp: it is not running", vim.log.levels.INFO)
  end
end

function actions.fork()
  local row = need(current(), "fork")
  if row and row.s then
    M.close()
    view.handlers.fork(row.s)
  elseif row then
    notify("acp: open the saved chat first (<CR>), then fork it", vim.log.levels.INFO)
  end
end

function actions.rename()
  local row = need(current(), "rename")
  if not row then
    return
  end
  local old = row.s and (row.s:name(200) or "") or (row.meta.title or "")
  vim.ui.input({ prompt = "Rename the session: ", default = old }, function(title)
    title = title and vim.trim(title) or ""
    if title == "" or title == old then
      return
    end
    M.rename(row, title)
  end)
end

--- Name row's session title: a live one through S:rename (the agent is
--- told where it can be), a saved one in its record.
---@param row acp.OverviewRow
---@param title string
function M.rename(row, title)
  if row.s then
    local sent = row.s:rename(title)
    notify(
      ("acp: renamed to %q%s"):format(title, sent and "" or " (here only: the agent takes no titles)"),
      vim.log.levels.INFO
    )
  else
    local _, err = history.update(row.meta, { title = title, renamed = true })
    if err then
      notify("acp: " .. err, vim.log.levels.ERROR)
    end
  end
  M.refresh()
end

function actions.archive()
  local row = need(current(), "archive")
  if not row then
    return
  end
  local meta = row.meta or (row.s and not row.s:alive() and row.s.history)
  if not meta then
    notify("acp: archive applies to saved chats: stop the session first", vim.log.levels.INFO)
    return
  end
  M.archive(meta, not meta.archived)
end

--- Archive (or unarchive) saved chat meta: hidden from the overview and
--- :AcpHistory until shown with `keymaps.sessions.archived`.
---@param meta acp.HistoryMeta
---@param on boolean
function M.archive(meta, on)
  local _, err = history.update(meta, { archived = on or vim.NIL })
  if err then
    notify("acp: " .. err, vim.log.levels.ERROR)
    return
  end
  local asked = view and view.handlers.archive and view.handlers.archive(meta, on)
  notify(
    ("acp: %s %s%s"):format(
      on and "archived" or "unarchived",
      meta.title or meta.id,
      asked and ("; asking %s to %s its session"):format(meta.agent, on and "archive" or "unarchive") or ""
    ),
    vim.log.levels.INFO
  )
  M.refresh()
end

function actions.delete()
  local row = need(current(), "delete")
  if not row then
    return
  end
  if row.s then
    notify("acp: delete applies to saved chats: stop the session first", vim.log.levels.INFO)
    return
  end
  local choice = vim.fn.confirm(("Delete the saved chat %q?"):format(row.meta.title or row.meta.id), "&Yes\n&No", 2)
  if choice == 1 then
    view.handlers.delete(row.meta)
    M.refresh()
  end
end

function actions.attention()
  if #attention.waiting() == 0 then
    notify("acp: no session waits for you", vim.log.levels.INFO)
    return
  end
  M.close()
  attention.go()
end

function actions.all_projects()
  view.all = not view.all
  M.refresh()
end

function actions.archived()
  view.archived = not view.archived
  M.refresh()
end

function actions.search()
  vim.ui.input({ prompt = "Search the saved chats: " }, function(text)
    if not text or vim.trim(text) == "" then
      return
    end
    M.close()
    local _, err = history_search.run(text)
    if err then
      notify("acp: " .. err, vim.log.levels.ERROR)
    end
  end)
end

function actions.help()
  keymaps.show_help({ "sessions" })
end

function actions.close()
  M.close()
end

--- The float's layout for the editor's size now.
float_config = function()
  local w = math.max(40, math.min(vim.o.columns - 4, 120))
  local want = view and (#view.rows + HEADER + 1) or 8
  local h = math.max(5, math.min(vim.o.lines - 6, want))
  return {
    relative = "editor",
    row = math.max(0, math.floor((vim.o.lines - h) / 2) - 1),
    col = math.max(0, math.floor((vim.o.columns - w) / 2) - 1),
    width = w,
    height = h,
    style = "minimal",
    border = "rounded",
    title = " acp sessions ",
  }
end

--- Open the overview (or focus it when open).
---@param handlers acp.OverviewHandlers
---@return integer buf
function M.open(handlers)
  highlights.ensure()
  if view and api.nvim_win_is_valid(view.win) then
    api.nvim_set_current_win(view.win)
    M.refresh()
    return view.buf
  end
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "acp_sessions"
  pcall(api.nvim_buf_set_name, buf, "acp://sessions")
  local win = api.nvim_open_win(buf, true, float_config())
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  layout.follow_resize(win, function()
    local cfg = float_config()
    vim.schedule(M.refresh)
    return cfg
  end)
  view = { buf = buf, win = win, rows = {}, by_key = {}, all = false, archived = false, handlers = handlers }
  keymaps.apply(buf, "sessions", actions)
  local group = api.nvim_create_augroup("acp_overview", { clear = true })
  api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AcpState",
    callback = function(ev)
      local key = type(ev.data) == "table" and ev.data.key
      if key then
        M.changed(key)
      end
    end,
  })
  -- How long each live session has been at it: its line, once a second.
  local timer = vim.uv.new_timer()
  view.timer = timer
  timer:start(
    1000,
    1000,
    vim.schedule_wrap(function()
      if not (view and view.timer == timer and api.nvim_buf_is_valid(view.buf)) then
        return
      end
      for i, row in ipairs(view.rows) do
        if row.s and row.s:alive() and row.s.state ~= "ready" then
          draw_row(i)
        end
      end
    end)
  )
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      pcall(api.nvim_del_augroup_by_id, group)
      if timer and not timer:is_closing() then
        timer:stop()
        timer:close()
      end
      view = nil
    end,
  })
  M.refresh()
  local first = #view.rows > 0 and HEADER + 1 or 1
  pcall(api.nvim_win_set_cursor, win, { first, 0 })
  return buf
end

--- The overview's buffer when it is open.
---@return integer|nil
function M.buf()
  return view and api.nvim_buf_is_valid(view.buf) and view.buf or nil
end

M.actions = actions

return M
