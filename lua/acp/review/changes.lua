--- The files an agent changed in a session (:AcpChanges, :AcpDiff): views
--- of the host's review record (package review), which keeps each file the
--- agent changed, whatever way it wrote it, with its content from before
--- the agent's first change (acp_changes) and its pending hunks
--- (acp.review). This module lists them in the quickfix list and opens a
--- side-by-side diff of that original against the file as it is now.
local actions = require("acp.chat.actions")
local buffers = require("acp.buffers")
local config = require("acp.config")
local files = require("acp.files")
local host = require("acp.host")
local layout = require("acp.layout")
local notify = require("acp.notify")
local review = require("acp.review")

local M = {}

local api = vim.api

--- The changes of session s: { path, original, existed }[] in the order first
--- written. Empty when the session has no host session yet.
---@param s acp.Session
---@return {path: string, original: string, existed: boolean}[]
function M.list(s)
  local res = {}
  if s.sid and host.channel() then
    local ok, r = pcall(host.request, "acp_changes", s.sid)
    if ok and type(r) == "table" then
      res = r
    end
  end
  -- Plus the edits agents make with their own tools (claude-agent-acp,
  -- codex), known from the diffs of their completed tool calls.
  local seen = {}
  for _, c in ipairs(res) do
    seen[c.path] = true
  end
  for _, c in ipairs(s.tool_changes) do
    if not seen[c.path] then
      res[#res + 1] = c
    end
  end
  return res
end

--- The text of path as the user sees it now: its loaded buffer, else the
--- disk; err says why the disk's text is not there (not a regular file, too
--- big).
---@param path string
---@return string text, boolean exists, string|nil err
function M.current_text(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and buffers.realpath(api.nvim_buf_get_name(b)) == path then
      local lines = api.nvim_buf_get_lines(b, 0, -1, false)
      local eol = vim.bo[b].eol or vim.bo[b].fixeol
      if #lines == 1 and lines[1] == "" then
        return "", true
      end
      return table.concat(lines, "\n") .. (eol and "\n" or ""), true
    end
  end
  if not vim.uv.fs_stat(path) then
    return "", false
  end
  -- A FIFO or device is never opened (it could block Neovim), nor a file
  -- over fs.max_bytes read.
  local text, err = files.read_regular(path, config.options.fs.max_bytes)
  return text or "", true, err
end

--- First 1-based line where a and b differ (1 when equal).
local function first_change(a, b)
  local hunks = (vim.text and vim.text.diff or vim.diff)(a, b, { result_type = "indices" })
  local h = hunks and hunks[1]
  if not h then
    return 1
  end
  return math.max(1, h[3] > 0 and h[3] or h[1])
end

--- Count lines added and removed between a and b.
local function stat(a, b)
  local add, del = 0, 0
  for _, h in ipairs((vim.text and vim.text.diff or vim.diff)(a, b, { result_type = "indices" }) or {}) do
    del = del + h[2]
    add = add + h[4]
  end
  return add, del
end

--- Quickfix items for the changes of s.
---@return table[]
function M.items(s)
  local items = {}
  for _, c in ipairs(M.list(s)) do
    local now, exists, err = M.current_text(c.path)
    local add, del = stat(c.original or "", now)
    local what
    local regular = not exists or actions.regular_file(c.path)
    if not regular then
      what = "not a regular file now"
    elseif err then
      what = "too big to compare"
    elseif not exists then
      what = "deleted since"
    elseif not c.existed then
      what = ("created (+%d)"):format(add)
    else
      what = ("modified (+%d -%d)"):format(add, del)
    end
    items[#items + 1] = {
      -- Only files the quickfix list can open without blocking Neovim.
      filename = regular and c.path or nil,
      lnum = exists and first_change(c.original or "", now) or 1,
      col = 1,
      text = regular and ("%s by %s; :AcpDiff to compare"):format(what, M.by(s, c))
        or ("%s: %s (not opened)"):format(c.path, what),
      user_data = { acp_original = c.original, acp_existed = c.existed },
    }
  end
  return items
end

--- Who wrote change c: the agent, you (a code block applied from the chat),
--- or both.
---@param s acp.Session
---@param c { by_agent: boolean|nil, by_user: boolean|nil }
---@return string
function M.by(s, c)
  local agent = s.agent or "the agent"
  if c.by_user and c.by_agent then
    return agent .. " and you"
  elseif c.by_user then
    return "you (a code block applied)"
  end
  return agent
end

--- :AcpChanges: every pending change of the agent's (one item per hunk,
--- from the review record, acp.review), then each file of the session's
--- with nothing pending any more, in the quickfix list (opened when not
--- empty).
---@param s acp.Session
---@return integer number of items
function M.quickfix(s)
  local items = review.qf_items()
  local listed = {}
  for _, it in ipairs(items) do
    listed[it.filename] = true
  end
  for _, it in ipairs(M.items(s)) do
    if not it.filename or not listed[it.filename] then
      it.text = it.text:gsub("; :AcpDiff to compare$", ", nothing pending; :AcpDiff to compare")
      items[#items + 1] = it
    end
  end
  vim.fn.setqflist({}, " ", { title = ("acp: changes of %s"):format(s.agent or "the agent"), items = items })
  if #items == 0 then
    notify("acp: the agent has changed no files in this session", vim.log.levels.INFO)
    return 0
  end
  -- Not from the chat: the list and its jumps belong to the editing windows.
  if vim.b.acp_role then
    for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
      local b = api.nvim_win_get_buf(w)
      if not vim.b[b].acp_role and api.nvim_win_get_config(w).relative == "" then
        api.nvim_set_current_win(w)
        break
      end
    end
  end
  vim.cmd("botright copen")
  layout.unfix()
  return #items
end

--- :AcpDiff [file]: side-by-side diff of file (default: the quickfix entry
--- under the cursor, else the current buffer's file) as it was before the
--- session first touched it vs as it is now.
---@param s acp.Session
---@param path string|nil
---@return boolean opened
function M.diff(s, path)
  if not path or path == "" then
    if vim.bo.buftype == "quickfix" then
      local item = vim.fn.getqflist()[vim.fn.line(".")]
      path = item and item.bufnr > 0 and api.nvim_buf_get_name(item.bufnr) or nil
    else
      path = api.nvim_buf_get_name(0)
    end
  end
  local real = buffers.realpath(path or "")
  for _, c in ipairs(M.list(s)) do
    if c.path == real then
      return actions.open_diff(s, { path = c.path, oldText = c.original or "", live = true })
    end
  end
  notify(("acp: the agent has not written %s in this session"):format(path or "?"), vim.log.levels.INFO)
  return false
end

return M
