--- Code blocks of the chat: jump between them (]] and [[), yank one (gy),
--- apply one to a file (ga) through the review path of the agent's writes
--- (a diff to accept or reject; then one undo step in the buffer).
local config = require("acp.config")
local files = require("acp.files")
local host = require("acp.host")
local notify = require("acp.notify")

local M = {}

local api = vim.api

---@class acp.CodeBlock
---@field row integer 0-based row of the opening fence
---@field end_row integer row of the closing fence (while open: the last row)
---@field closed boolean
---@field lang string|nil the info string's first word
---@field info string the whole info string

--- The fenced code blocks in lines (fences at the start of a line, as the
--- agent's text has them; tool output and diffs are indented).
---@param lines string[]
---@return acp.CodeBlock[]
function M.scan(lines)
  local out, open = {}, nil
  for i, l in ipairs(lines) do
    local fence, info = l:match("^(```+)%s*(.-)%s*$")
    if fence then
      if open and #fence >= open.fence and info == "" then
        open.end_row, open.closed, open.fence = i - 1, true, nil
        out[#out + 1] = open
        open = nil
      elseif not open then
        open = {
          row = i - 1,
          end_row = i - 1,
          closed = false,
          info = info,
          lang = info:match("^([%w_+#.-]+)"),
          fence = #fence,
        }
      end
    end
  end
  if open then
    open.end_row, open.fence = #lines - 1, nil
    out[#out + 1] = open
  end
  return out
end

--- The code blocks of session s's transcript. The transcript's own block
--- model answers when it has one (T:code_blocks, issue 9); else the chat
--- buffer is scanned.
---@param s acp.Session
---@return acp.CodeBlock[]
function M.list(s)
  local t = s.transcript
  if type(t.code_blocks) == "function" then
    return t:code_blocks()
  end
  return M.scan(api.nvim_buf_get_lines(s.chat_buf, 0, -1, false))
end

--- The lines inside block b (fences excluded).
---@param s acp.Session
---@param b acp.CodeBlock
---@return string[]
function M.text(s, b)
  local last = b.closed and b.end_row - 1 or b.end_row
  if last <= b.row then
    return {}
  end
  return api.nvim_buf_get_lines(s.chat_buf, b.row + 1, last + 1, false)
end

--- The block at 0-based row, if any.
---@param s acp.Session
---@param row integer
---@return acp.CodeBlock|nil
function M.at(s, row)
  for _, b in ipairs(M.list(s)) do
    if row >= b.row and row <= b.end_row then
      return b
    end
  end
end

--- Move the cursor to the count-th next (dir 1) or previous (dir -1) code
--- block's first line.
---@param s acp.Session
---@param dir 1|-1
---@param count integer|nil default 1
---@return boolean moved
function M.jump(s, dir, count)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  -- The blocks past the cursor in the direction of the jump, nearest first.
  local ahead = {}
  for _, b in ipairs(M.list(s)) do
    if (dir > 0 and b.row + 1 > row) or (dir < 0 and b.row + 1 < row) then
      table.insert(ahead, dir > 0 and #ahead + 1 or 1, b)
    end
  end
  local target = ahead[count or 1]
  if not target then
    notify(("acp: no %s code block"):format(dir > 0 and "next" or "previous"), vim.log.levels.INFO)
    return false
  end
  if api.nvim_get_mode().mode == "n" then
    vim.cmd("normal! m'") -- '' goes back
  end
  local last = api.nvim_buf_line_count(s.chat_buf)
  api.nvim_win_set_cursor(0, { math.min(target.row + 2, last), 0 })
  return true
end

--- Yank the code block under the cursor (linewise) into register reg
--- (default: the unnamed register, and "0 as a yank does).
---@param s acp.Session
---@param reg string|nil
---@return string[]|nil the yanked lines
function M.yank(s, reg)
  local b = M.at(s, api.nvim_win_get_cursor(0)[1] - 1)
  if not b then
    notify("acp: no code block under the cursor", vim.log.levels.INFO)
    return nil
  end
  local lines = M.text(s, b)
  reg = (reg == nil or reg == "") and '"' or reg
  vim.fn.setreg(reg, lines, "l")
  if reg == '"' then
    vim.fn.setreg("0", lines, "l")
  end
  notify(
    ("acp: yanked %d line%s%s"):format(#lines, #lines == 1 and "" or "s", b.lang and (" of " .. b.lang) or ""),
    vim.log.levels.INFO
  )
  return lines
end

--- A path the block's info string names ("lua src/x.lua", "src/x.lua",
--- "lua:src/x.lua"), if that is a regular file or a missing file whose
--- directory exists.
---@param info string
---@return string|nil absolute path
function M.named_path(info)
  for word in info:gmatch("[^%s:]+") do
    if word:find("[/.]") then
      local path = vim.fn.fnamemodify(word, ":p")
      local st = (vim.uv or vim.loop).fs_stat(path)
      if st and st.type == "file" or not st and vim.fn.isdirectory(vim.fn.fnamemodify(path, ":h")) == 1 then
        return path
      end
    end
  end
end

--- The current text of path: its loaded buffer, else the disk ({} when
--- there is no such file); nil and why when it cannot be read (not a
--- regular file, over fs.max_bytes).
---@param path string
---@return string[]|nil lines, integer|string|nil buf or the error
local function current_lines(path)
  local max = config.options.fs.max_bytes
  local buf = vim.fn.bufnr(path)
  if buf > 0 and api.nvim_buf_is_loaded(buf) then
    local size = api.nvim_buf_get_offset(buf, api.nvim_buf_line_count(buf))
    if size > max then
      return nil,
        ("%s is %s in its buffer, over the %s limit (fs.max_bytes): not read"):format(
          path,
          files.size(size),
          files.size(max)
        )
    end
    return api.nvim_buf_get_lines(buf, 0, -1, false), buf
  end
  if not (vim.uv or vim.loop).fs_stat(path) then
    return {}, nil
  end
  local data, err = files.read_regular(path, max)
  if not data then
    return nil, err
  end
  local lines = vim.split(data, "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines, nil
end

--- Where in path the block goes: the whole file, the last visual selection
--- in its buffer, or below the cursor line of a window showing it; nil and
--- why when path cannot be read.
---@param path string
---@return { id: string, label: string, first: integer, last: integer }[]|nil 1-based lines replaced (last < first: insert)
---@return string|nil err
function M.placements(path)
  local lines, buf = current_lines(path)
  if not lines then
    return nil, buf --[[@as string]]
  end
  local exists = buf or (vim.uv or vim.loop).fs_stat(path)
  local out = {
    {
      id = "file",
      label = exists and ("Replace the whole file (%d lines)"):format(#lines) or "Create the file",
      first = 1,
      last = #lines,
    },
  }
  if buf then
    local s, e = api.nvim_buf_get_mark(buf, "<"), api.nvim_buf_get_mark(buf, ">")
    if s[1] > 0 and e[1] >= s[1] and e[1] <= #lines then
      out[#out + 1] = {
        id = "selection",
        label = ("Replace lines %d-%d (your last selection there)"):format(s[1], e[1]),
        first = s[1],
        last = e[1],
      }
    end
    local win = vim.fn.bufwinid(buf)
    local row = win ~= -1 and api.nvim_win_get_cursor(win)[1] or api.nvim_buf_get_mark(buf, '"')[1]
    if row and row > 0 then
      out[#out + 1] =
        { id = "insert", label = ("Insert below line %d (the cursor there)"):format(row), first = row + 1, last = row }
    end
  end
  return out
end

--- The text of path after placing block lines at p.
---@param path string
---@param block string[]
---@param p { first: integer, last: integer }
---@return string
function M.proposal(path, block, p)
  local lines = current_lines(path) or {}
  local out = vim.list_slice(lines, 1, p.first - 1)
  vim.list_extend(out, block)
  vim.list_extend(out, lines, p.last + 1)
  return table.concat(out, "\n") .. "\n"
end

--- Candidate files for the block: the one its info names, the previous
--- window's file, then the other loaded files; never the plugin's own log.
---@param b acp.CodeBlock
---@return string[]
function M.candidates(b)
  local out, seen = {}, {}
  local log = host.log_path()
  seen[log], seen[log .. ".1"] = true, true
  local function add(path)
    if path and path ~= "" and not seen[path] then
      seen[path] = true
      out[#out + 1] = path
    end
  end
  add(M.named_path(b.info or ""))
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 then
    local buf = api.nvim_win_get_buf(prev)
    if vim.bo[buf].buftype == "" then
      add(api.nvim_buf_get_name(buf))
    end
  end
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if
      api.nvim_buf_is_loaded(buf)
      and vim.bo[buf].buflisted
      and vim.bo[buf].buftype == ""
      and not vim.b[buf].acp_role
    then
      add(api.nvim_buf_get_name(buf))
    end
  end
  return out
end

--- Apply the code block under the cursor to a file: pick the file and
--- where it goes (vim.ui.select), then the host shows the review diff and,
--- once accepted, applies it as an agent's write is applied.
---@param s acp.Session
function M.apply(s)
  local b = M.at(s, api.nvim_win_get_cursor(0)[1] - 1)
  if not b then
    notify("acp: no code block under the cursor", vim.log.levels.INFO)
    return
  end
  if not s.sid or not s:alive() then
    notify("acp: the session has ended; :AcpChat starts one to apply blocks with", vim.log.levels.WARN)
    return
  end
  local block = M.text(s, b)
  local function place(path)
    path = vim.fn.fnamemodify(path, ":p")
    local placements, err = M.placements(path)
    if not placements then
      notify("acp: " .. err, vim.log.levels.WARN)
      return
    end
    vim.ui.select(placements, {
      prompt = ("Apply the %d-line block to %s"):format(#block, vim.fn.fnamemodify(path, ":~:.")),
      format_item = function(p)
        return p.label
      end,
    }, function(p)
      if p then
        host.notify("acp_apply", s.sid, path, M.proposal(path, block, p))
      end
    end)
  end
  local targets = M.candidates(b)
  local other = "Another file..."
  targets[#targets + 1] = other
  vim.ui.select(targets, {
    prompt = "Apply the code block to",
    format_item = function(p)
      return p == other and p or vim.fn.fnamemodify(p, ":~:.")
    end,
  }, function(path)
    if path == other then
      vim.ui.input({ prompt = "Apply to file: ", completion = "file" }, function(p)
        if p and p ~= "" then
          place(p)
        end
      end)
    elseif path then
      place(path)
    end
  end)
end

return M
