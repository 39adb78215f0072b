--- The files an agent wrote in a session (:AcpChanges, :AcpDiff).
---
--- The host keeps, per session, each file the agent wrote through
--- fs/write_text_file with its content from before the session first touched
--- it (acp_changes). This module lists them in the quickfix list and opens a
--- side-by-side diff of that original against the file as it is now.
local actions = require("acp.actions")
local buffers = require("acp.buffers")
local host = require("acp.host")
local layout = require("acp.layout")

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

--- The text of path as the user sees it now: its loaded buffer, else the disk.
---@param path string
---@return string text, boolean exists
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
  local st = vim.uv.fs_stat(path)
  if not st then
    return "", false
  end
  if st.type ~= "file" then
    return "", true -- a FIFO or device: never opened (it could block Neovim)
  end
  local f = io.open(path, "rb")
  if not f then
    return "", false
  end
  local text = f:read("*a")
  f:close()
  return text, true
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
    local now, exists = M.current_text(c.path)
    local add, del = stat(c.original or "", now)
    local what
    local regular = not exists or actions.regular_file(c.path)
    if not regular then
      what = "not a regular file now"
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

--- :AcpChanges: the files the session's agent wrote, in the quickfix list
--- (opened when not empty).
---@param s acp.Session
---@return integer number of files
function M.quickfix(s)
  local items = M.items(s)
  vim.fn.setqflist({}, " ", { title = ("acp: files %s wrote"):format(s.agent or "the agent"), items = items })
  if #items == 0 then
    vim.notify("acp: the agent has written no files in this session", vim.log.levels.INFO)
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
  vim.notify(("acp: the agent has not written %s in this session"):format(path or "?"), vim.log.levels.INFO)
  return false
end

return M
