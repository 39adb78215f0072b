--- Actions on the transcript: jump to locations, open diffs and terminals.
local files = require("acp.files")
local host = require("acp.host")
local layout = require("acp.layout")
local notify = require("acp.notify")

local M = {}

local api = vim.api

--- path as a file name taken literally: "~/" at its start is the home
--- directory and a relative path is under the cwd; nothing else ($VAR,
--- `cmd`, wildcards, %, #) is interpreted. Agent text goes through here,
--- never through expand() (which runs backticks through the shell).
---@param path string
---@return string absolute, "." and ".." resolved lexically
function M.literal_path(path)
  if path == "~" or vim.startswith(path, "~/") then
    path = (vim.uv.os_homedir() or "") .. path:sub(2)
  end
  if path:sub(1, 1) ~= "/" then
    path = vim.fn.getcwd() .. "/" .. path
  end
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return "/" .. table.concat(parts, "/")
end

--- Whether path is a regular file (after symlinks): the only thing the
--- plugin opens for the agent. A FIFO, device or socket would block Neovim
--- in open(2) or act when opened.
---@param path string
---@return boolean
function M.regular_file(path)
  return files.check_regular(path) == nil
end

--- The loaded buffer named path, if any (bufnr() would read path as a
--- pattern).
---@param path string
---@return integer|nil
function M.loaded_buffer(path)
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(b) and api.nvim_buf_get_name(b) == path then
      return b
    end
  end
end

--- Show file path in the current window: its buffer as it is when loaded
--- (unsaved edits included), else the file read into a new buffer, with no
--- Ex command line parsed (no expansion of any kind). Only regular files.
---@param path string absolute
---@return boolean ok, string|nil err
function M.edit(path)
  local buf = M.loaded_buffer(path)
  if not buf then
    if not M.regular_file(path) then
      return false, "not a regular file"
    end
    buf = vim.fn.bufadd(path)
    local released, ok, err = files.open_guarded(path, function()
      return pcall(vim.fn.bufload, buf)
    end)
    if released then
      -- What was read came from a FIFO swapped in after the check: no
      -- buffer of it, named as the file, is left to be saved over it.
      pcall(api.nvim_buf_delete, buf, { force = true })
      return false, "it turned into a FIFO as it was opened: not read"
    end
    if not ok then
      return false, tostring(err)
    end
    vim.bo[buf].buflisted = true
  end
  local ok, err = pcall(api.nvim_win_set_buf, 0, buf)
  return ok, not ok and tostring(err) or nil
end

--- The path and line of a `path:line` location on the cursor line, if any:
--- an existing regular file (the path taken literally, see literal_path).
---@return string|nil, integer|nil
function M.location_at_cursor()
  local line = api.nvim_get_current_line()
  local path, lnum = line:match("^%s+([^%s:]+):(%d+)%s*$")
  if not path then
    path = line:match("^%s+([^%s:]+)%s*$")
  end
  if not path then
    return nil
  end
  local full = M.literal_path(path)
  if not M.regular_file(full) then
    return nil
  end
  return full, lnum and tonumber(lnum) or nil
end

local function previous_window(s)
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and prev ~= s.chat_win and prev ~= s.input_win then
    return prev
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    local buf = api.nvim_win_get_buf(win)
    if buf ~= s.chat_buf and buf ~= s.input_buf and api.nvim_win_get_config(win).relative == "" then
      return win
    end
  end
end

--- Open the location under the cursor in the previous window.
function M.open_location(s)
  local path, lnum = M.location_at_cursor()
  if not path then
    notify("acp: no file location under the cursor", vim.log.levels.INFO)
    return false
  end
  local win = previous_window(s)
  if win then
    api.nvim_set_current_win(win)
  else
    vim.cmd("topleft vsplit")
    layout.unfix()
  end
  local ok, err = M.edit(path)
  if not ok then
    notify("acp: cannot open " .. path .. ": " .. tostring(err), vim.log.levels.ERROR)
    return false
  end
  if lnum then
    pcall(api.nvim_win_set_cursor, 0, { lnum, 0 })
    vim.cmd("normal! zz")
  end
  return true
end

--- The fields of the tool call under the cursor, if any.
---@param s acp.Session
---@return table|nil
local function tool_at_cursor(s)
  return s.transcript:tool_at(api.nvim_win_get_cursor(0)[1] - 1)
end

--- The diff content of the tool call under the cursor, if any.
---@param s acp.Session
---@return table|nil
function M.diff_at_cursor(s)
  local tc = tool_at_cursor(s)
  for _, c in ipairs(tc and type(tc.content) == "table" and tc.content or {}) do
    if type(c) == "table" and c.type == "diff" then
      return c
    end
  end
end

--- Open the edit under the cursor (or c: {path, oldText, newText}) as a
--- side-by-side diff in a new tab; with c.live the right side is the file's
--- own buffer.
function M.open_diff(s, c)
  c = c or M.diff_at_cursor(s)
  if not c then
    notify("acp: no diff under the cursor", vim.log.levels.INFO)
    return false
  end
  local path = type(c.path) == "string" and c.path or "edit"
  if c.live and not (M.loaded_buffer(path) or M.regular_file(path)) then
    notify(("acp: cannot open %s: not a regular file"):format(path), vim.log.levels.ERROR)
    return false
  end
  local name = vim.fs.basename(path)
  vim.cmd("tabnew")
  layout.unfix()
  local function side(label, text)
    local buf = api.nvim_get_current_buf()
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    local lines = vim.split(text or "", "\n", { plain = true })
    if lines[#lines] == "" then
      lines[#lines] = nil
    end
    api.nvim_buf_set_lines(buf, 0, -1, false, lines)
    pcall(api.nvim_buf_set_name, buf, ("acp://diff/%s/%s"):format(label, name))
    local ft = vim.filetype.match({ filename = path })
    if ft then
      vim.bo[buf].filetype = ft
    end
    vim.bo[buf].modifiable = false
    vim.cmd("diffthis")
  end
  side("old", c.oldText)
  local scratch = { api.nvim_get_current_buf() }
  if c.live then
    -- The file itself on the right: do/dp take hunks back and forth, and
    -- what you change is what gets saved.
    vim.cmd("rightbelow vsplit")
    local ok, err = M.edit(path)
    if not ok then
      notify(("acp: cannot open %s: %s"):format(path, err), vim.log.levels.ERROR)
      vim.cmd("tabclose")
      return false
    end
    vim.cmd("diffthis")
  else
    vim.cmd("rightbelow vnew")
    side("new", c.newText)
    scratch[#scratch + 1] = api.nvim_get_current_buf()
  end
  -- q closes the whole diff tab (mapped in the scratch sides only).
  for _, b in ipairs(scratch) do
    vim.keymap.set("n", "q", "<cmd>tabclose<cr>", { buffer = b, nowait = true, desc = "acp: close the diff" })
  end
  return true
end

--- Open the terminal of the tool call under the cursor; false when there is none.
---@param s acp.Session
---@return boolean
function M.open_terminal(s)
  local id = s.terminals:shown_by(tool_at_cursor(s))
  return id ~= nil and s.terminals:open(id, { s.chat_buf, s.input_buf }) ~= nil
end

--- <CR> in the transcript: open what is under the cursor (a location, a
--- diff, a terminal).
---@param s acp.Session
---@return boolean|nil
function M.activate(s)
  if M.location_at_cursor() then
    return M.open_location(s)
  end
  if M.diff_at_cursor(s) then
    return M.open_diff(s)
  end
  return M.open_terminal(s)
end

--- The subagent whose section is under the cursor, or a warning.
---@param s acp.Session
---@return table|nil
local function subagent_here(s)
  local sec = s.transcript:subagent_at(api.nvim_win_get_cursor(0)[1] - 1)
  if not sec then
    notify.notify("acp: no subagent under the cursor", vim.log.levels.WARN)
  end
  return sec
end

--- Open the subagent under the cursor in a buffer of its own (a split),
--- kept up to date while it works.
---@param s acp.Session
function M.open_subagent(s)
  local sec = subagent_here(s)
  local buf = sec and s.transcript:subagent_buffer(sec.id)
  if buf then
    vim.cmd("split")
    api.nvim_win_set_buf(0, buf)
    -- Wrapped rows keep the section's gutter (acp.render.subagent).
    for opt, v in pairs({ wrap = true, linebreak = true, breakindent = true, breakindentopt = "list:2" }) do
      vim.wo[0][opt] = v
    end
  end
end

--- Cancel the work of the subagent under the cursor, where the agent lets
--- the client (its capabilities' cancel): the subagent's session stays.
---@param s acp.Session
function M.cancel_subagent(s)
  local sec = subagent_here(s)
  if not sec then
    return
  elseif not sec.can_cancel then
    notify.notify(
      ("acp: the agent does not let subagent %s be cancelled (<C-c> cancels the whole turn)"):format(
        s.transcript:subagent_name(sec.id)
      ),
      vim.log.levels.WARN
    )
    return
  end
  local ok, err = pcall(host.request, "acp_cancel_subagent", s.sid, sec.id)
  if not ok then
    notify.notify("acp: " .. tostring(err), vim.log.levels.ERROR)
    return
  end
  s.transcript:message("info", ("Cancelling subagent %s."):format(s.transcript:subagent_name(sec.id)))
end

--- Cancel the tool call under the cursor, or the terminal it shows (ACP
--- v2's tool_call/cancel, terminal/cancel), where the agent lets the
--- client: the turn goes on; the tool call's own update says when it ended.
---@param s acp.Session
function M.cancel_tool(s)
  local tc = tool_at_cursor(s)
  if not (tc and type(tc.toolCallId) == "string") then
    notify.notify("acp: no tool call under the cursor", vim.log.levels.WARN)
    return
  end
  local ok, err = pcall(host.request, "acp_cancel_item", s.sid, tc.toolCallId)
  if not ok then
    notify.notify("acp: " .. tostring(err), vim.log.levels.WARN)
    return
  end
  local title = type(tc.title) == "string" and tc.title ~= "" and tc.title or tc.toolCallId
  s.transcript:message("info", ("Cancelling %s."):format(title))
end

return M
