--- Full-text search of the saved chats of every agent and project
--- (:AcpHistory /text, `keymaps.sessions.search` in :AcpSessions). The host
--- reads the transcripts (chatsearch/, host/search.go) and sends each
--- chat's hits as soon as it has read it; they are listed here as they
--- come, in a window below: a line per chat (date, agent, title, project)
--- and a line per hit (its line, who said it, the text). <CR> opens the
--- saved chat read-only at that line, its message at the top; q closes.
local lazy = require("acp.lazy")
local chatui = lazy("acp.chat")
local highlights = require("acp.highlights")
local history = require("acp.history")
local host = require("acp.host")
local notify = require("acp.notify")

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_history_search")

--- The window's height (lines).
M.height = 15

---@class acp.SearchRow
---@field meta acp.HistoryMeta
---@field hit table|nil { line, col, text, who, header_line } (nil: the chat's line)

---@class acp.SearchView
---@field request integer
---@field query string
---@field buf integer
---@field win integer|nil
---@field rows table<integer, acp.SearchRow> by buffer line (1-based)
---@field chats integer
---@field hits integer
---@field done boolean
---@field summary string|nil how it ended

local view ---@type acp.SearchView|nil
local requests = 0

--- The search shown now (tests).
---@return acp.SearchView|nil
function M.view()
  return view
end

local function one_line(v)
  return (tostring(v or ""):gsub("%s+", " "))
end

--- The window's bar: the query, how many, and whether it is still going.
local function bar()
  if not (view and view.win and api.nvim_win_is_valid(view.win)) then
    return
  end
  local state = view.summary or "searching…"
  vim.wo[view.win].winbar = ("%%#AcpAgent#Saved chats with %q%%*  %d hit%s in %d chat%s  %s"):format(
    one_line(view.query):gsub("%%", "%%%%"),
    view.hits,
    view.hits == 1 and "" or "s",
    view.chats,
    view.chats == 1 and "" or "s",
    state:gsub("%%", "%%%%")
  )
end

--- Append one chat's hits (an event's chat) to the list.
---@param chat table { path, meta, hits, more }
local function add(chat)
  local meta = type(chat.meta) == "table" and chat.meta or nil
  if not meta or type(meta.id) ~= "string" then
    -- No index entry: named by its file.
    meta = {
      id = vim.fn.fnamemodify(chat.path or "?", ":t:r"),
      title = vim.fn.fnamemodify(chat.path or "?", ":t"),
      agent = "?",
    }
  end
  meta.path = chat.path -- where the host found it (history.open reads it there)
  local buf = view.buf
  local n = api.nvim_buf_line_count(buf)
  local first = n == 1 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "" and 0 or n
  local lines = {
    ("%s  %s  %s  (%s)"):format(
      os.date("%Y-%m-%d %H:%M", tonumber(meta.updated) or 0),
      one_line(meta.agent),
      one_line(meta.title),
      vim.fn.fnamemodify(tostring(meta.project or "?"), ":~")
    ),
  }
  local rows = { { meta = meta } }
  for _, h in ipairs(chat.hits or {}) do
    local prefix = ("  %5d  %s: "):format(h.line or 0, one_line(h.who ~= "" and h.who or "…"))
    lines[#lines + 1] = prefix .. (h.text or ""):gsub("[\r\n]", " ")
    rows[#rows + 1] = { meta = meta, hit = h, col = #prefix }
  end
  if chat.more then
    lines[#lines + 1] = "  … more in this chat"
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, first, -1, false, lines)
  vim.bo[buf].modifiable = false
  for i, row in ipairs(rows) do
    local lnum = first + i -- 1-based
    view.rows[lnum] = row
    if row.hit then
      local c = row.col + (row.hit.col or 0)
      pcall(api.nvim_buf_set_extmark, buf, ns, lnum - 1, c, {
        end_col = math.min(c + #view.query, #lines[i]),
        hl_group = "AcpSearchMatch",
      })
      pcall(api.nvim_buf_set_extmark, buf, ns, lnum - 1, 0, { end_col = row.col, hl_group = "Comment" })
    else
      pcall(api.nvim_buf_set_extmark, buf, ns, lnum - 1, 0, { end_row = lnum, hl_group = "AcpAgent", hl_eol = false })
    end
  end
  view.chats = view.chats + 1
  view.hits = view.hits + #(chat.hits or {})
end

--- A history_search event of the host (session/events.lua routes it).
---@param ev table
function M.on_event(ev)
  if not view or ev.request ~= view.request or not api.nvim_buf_is_valid(view.buf) then
    return
  end
  if ev.chat then
    add(ev.chat)
  elseif ev.done then
    view.done = true
    if ev.error then
      view.summary = "failed: " .. tostring(ev.error)
      notify("acp: search of the saved chats failed: " .. tostring(ev.error), vim.log.levels.ERROR)
    elseif ev.cancelled then
      view.summary = "(stopped)"
    else
      local n = ev.chats or 0
      view.summary = ("(%d chat%s read%s)"):format(
        n,
        n == 1 and "" or "s",
        ev.truncated and ", stopped at the hits' limit" or ""
      )
      if view.hits == 0 then
        vim.bo[view.buf].modifiable = true
        api.nvim_buf_set_lines(view.buf, 0, -1, false, { "no saved chat holds " .. vim.inspect(view.query) })
        vim.bo[view.buf].modifiable = false
      end
    end
  end
  bar()
end

--- Open the saved chat of row at its hit: the cursor on the matching line,
--- the message it is in from the top when it fits the window.
---@param row acp.SearchRow
function M.open_row(row)
  local meta = row.meta
  local buf = history.open(meta)
  local hit = row.hit
  if not hit then
    return buf
  end
  local win = api.nvim_get_current_win()
  local line = math.min(hit.line or 1, api.nvim_buf_line_count(buf))
  local top = hit.header_line and hit.header_line > 0 and hit.header_line or line
  if line - top >= api.nvim_win_get_height(win) - 1 then
    top = math.max(1, line - 2)
  end
  vim.fn.winrestview({ topline = top, lnum = line, col = hit.col or 0 })
  return buf
end

--- The list's actions.
local function open_current()
  if not view then
    return
  end
  local row = view.rows[api.nvim_win_get_cursor(0)[1]]
  if not row then
    return
  end
  M.open_row(row)
end

--- Stop the search running, if any.
function M.cancel()
  if view and not view.done and host.channel() then
    pcall(host.notify, "acp_history_search_cancel", view.request)
  end
end

--- Close the results.
function M.close()
  M.cancel()
  if view and view.win and api.nvim_win_is_valid(view.win) then
    pcall(api.nvim_win_close, view.win, true)
    -- Its rows went to the window above, a chat's input: the chat's
    -- windows get their sizes back.
    chatui.resize()
  end
end

--- The results buffer, new, in a window below the others.
---@return integer buf, integer win
local function window()
  if view and view.win and api.nvim_win_is_valid(view.win) then
    local win = view.win -- the old list's buffer goes (and view with it)
    local buf = api.nvim_create_buf(false, true)
    api.nvim_win_set_buf(win, buf)
    return buf, win
  end
  local buf = api.nvim_create_buf(false, true)
  vim.cmd(("botright %dsplit"):format(M.height))
  local win = api.nvim_get_current_win()
  pcall(function()
    vim.wo[win].winfixbuf = false
  end)
  api.nvim_win_set_buf(win, buf)
  vim.wo[win].winfixheight = true
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  vim.wo[win].number = false
  return buf, win
end

--- Search the saved chats of every project for query (a literal text;
--- letters of either case unless it has an upper-case one), listing the
--- hits as they come. Returns the request's number, or nil and why not.
---@param query string
---@return integer|nil, string|nil
function M.run(query)
  query = query and vim.trim(query) or ""
  if query == "" then
    return nil, "nothing to search for"
  end
  highlights.ensure()
  M.cancel()
  requests = requests + 1
  local buf, win = window()
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "acp_search"
  pcall(api.nvim_buf_set_name, buf, ("acp://search/%d"):format(requests))
  vim.bo[buf].modifiable = false
  view = { request = requests, query = query, buf = buf, win = win, rows = {}, chats = 0, hits = 0, done = false }
  local mine = view
  local opts = { buffer = buf, nowait = true }
  vim.keymap.set("n", "<CR>", open_current, vim.tbl_extend("force", opts, { desc = "acp: open the saved chat here" }))
  vim.keymap.set("n", "q", M.close, vim.tbl_extend("force", opts, { desc = "acp: close the search" }))
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      if view == mine then
        M.cancel()
        view = nil
      end
    end,
  })
  bar()
  history.flush() -- the saves of this Neovim's chats on their way first
  local ok, err = pcall(host.request, "acp_history_search", {
    request = requests,
    root = history.root(),
    query = query,
  })
  if not ok or err == false then
    view.done, view.summary = true, "failed: " .. tostring(err)
    bar()
    return nil, tostring(err)
  end
  return requests
end

--- :AcpHistory /text (no text: asked for).
---@param query string|nil
function M.command(query)
  local function go(q)
    if not q or vim.trim(q) == "" then
      return
    end
    local _, err = M.run(q)
    if err then
      notify("acp: " .. err, vim.log.levels.ERROR)
    end
  end
  if query and vim.trim(query) ~= "" then
    go(query)
  else
    vim.ui.input({ prompt = "Search the saved chats: " }, go)
  end
end

return M
