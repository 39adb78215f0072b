--- Actions on the transcript: jump to locations, open diffs and terminals.
local layout = require("acp.layout")

local M = {}

local api = vim.api

--- The path and line of a `path:line` location on the cursor line, if any.
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
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  if vim.fn.filereadable(full) ~= 1 then
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
    vim.notify("acp: no file location under the cursor", vim.log.levels.INFO)
    return false
  end
  local win = previous_window(s)
  if win then
    api.nvim_set_current_win(win)
  else
    vim.cmd("topleft vsplit")
    layout.unfix()
  end
  -- A buffer with unsaved edits is shown as it is (":edit" would refuse).
  local bufnr = vim.fn.bufnr(path)
  local ok, err
  if bufnr > 0 and api.nvim_buf_is_loaded(bufnr) then
    ok, err = pcall(api.nvim_win_set_buf, 0, bufnr)
  else
    ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(path))
  end
  if not ok then
    vim.notify("acp: cannot open " .. path .. ": " .. tostring(err), vim.log.levels.ERROR)
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
    vim.notify("acp: no diff under the cursor", vim.log.levels.INFO)
    return false
  end
  local name = vim.fn.fnamemodify(c.path or "edit", ":t")
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
    local ft = vim.filetype.match({ filename = c.path or "" })
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
    local bufnr = vim.fn.bufnr(c.path)
    if bufnr > 0 and api.nvim_buf_is_loaded(bufnr) then
      api.nvim_win_set_buf(0, bufnr)
    else
      vim.cmd.edit(vim.fn.fnameescape(c.path))
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

return M
