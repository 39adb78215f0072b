--- The diagnostics tool's text, made in Neovim (editormcp.LuaQueries in the
--- host passes it through): one line per diagnostic,
---   path:line:col: severity: message [source code]
--- the path relative to the workspace when under it, files by path, lines
--- by position. Each file's lines come apart (the host leaves out a file
--- whose path leads out of the workspace, and counts it), and at most
--- args.limit lines in all.
local M = {}

local api = vim.api

local severities = { "error", "warning", "info", "hint" }

--- The bytes %s matches.
local blank = { [9] = true, [10] = true, [11] = true, [12] = true, [13] = true, [32] = true }

--- message on one line: newlines shown as " ⏎ ", runs of blanks as one
--- space.
local function one_line(s)
  if not (s:find("\n", 1, true) or s:find("\r", 1, true) or s:find("\t", 1, true)) then
    return s
  end
  return vim.trim((s:gsub("\n", " ⏎ "):gsub("%s+", " ")))
end

local function by_pos(x, y)
  if x.lnum ~= y.lnum then
    return x.lnum < y.lnum
  end
  if x.col ~= y.col then
    return x.col < y.col
  end
  local sx, sy = x.severity or 1, y.severity or 1
  if sx ~= sy then
    return sx < sy
  end
  return (x.message or "") < (y.message or "")
end

--- ds (one buffer's) by position; most lists come sorted: checked first.
local function sort(ds)
  for i = 2, #ds do
    local x, y = ds[i - 1], ds[i]
    if x.lnum > y.lnum or (x.lnum == y.lnum and x.col >= y.col) then
      table.sort(ds, by_pos)
      return
    end
  end
end

--- One buffer's lines, sorted, and their severities.
---@param ds vim.Diagnostic[] the buffer's diagnostics, sorted
---@param name string the path as the lines show it
---@return string[] lines, integer[] severities
local function format(ds, name)
  local lines, sevs = {}, {}
  local head = name .. ":"
  for i, d in ipairs(ds) do
    local sev = d.severity or 1
    local src, code = d.source, d.code
    local tail = "\n"
    if src == "" then
      src = nil
    end
    if src or code then
      -- "[source code]", as strings.TrimSpace(source .. " " .. code).
      local t = src and code and src .. " " .. tostring(code) or src or tostring(code)
      if blank[t:byte(1)] or blank[t:byte(-1)] then
        t = vim.trim(t)
      end
      tail = " [" .. t .. "]\n"
    end
    lines[i] = head
      .. (d.lnum + 1)
      .. ":"
      .. (d.col + 1)
      .. ": "
      .. (severities[sev] or "diagnostic")
      .. ": "
      .. one_line(d.message or "")
      .. tail
    sevs[i] = sev
  end
  return lines, sevs
end

local normalized = {} ---@type table<string, string> buffer names, normalized

--- The path of buffer buf, normalized ("" when it has none).
local function buf_path(buf)
  local name = api.nvim_buf_get_name(buf)
  local p = normalized[name]
  if not p then
    p = name == "" and "" or vim.fs.normalize(name)
    normalized[name] = p
  end
  return p
end

-- Each buffer's diagnostics are kept, formatted, until DiagnosticChanged
-- says they changed (vim.diagnostic.get copies every diagnostic it
-- returns: 1,000 of them were most of a query). Every change to what
-- vim.diagnostic holds (set, reset) fires it for the buffer; a buffer wiped
-- out is dropped when found invalid. set()'s event carries the new list,
-- but only as a copy made for a Lua callback: reading the buffer when asked
-- costs the same copy, and only for the buffers asked.

---@class acp.mcp.DiagEntry
---@field ds? vim.Diagnostic[] the buffer's diagnostics (copies), sorted, until formatted (then dropped: a heap that keeps 1,000 copies makes every collection longer)
---@field name? string the path its lines show
---@field lines? string[] its lines
---@field sevs? integer[] their severities
---@field text? string its lines joined

local entries = {} ---@type table<integer, acp.mcp.DiagEntry>
local dirty = {} ---@type table<integer, true> buffers changed since read
local complete = false -- entries has every buffer that has diagnostics
local augroup ---@type integer?

--- Starts following changes (once): until then nothing kept is trusted.
local function follow()
  if augroup then
    return
  end
  augroup = api.nvim_create_augroup("acp_mcp_diagnostics", { clear = true })
  -- A command, not a Lua callback: Neovim copies the event's data (set()'s
  -- whole list) for each Lua callback, at every change of every buffer; the
  -- buffer is read (copied) only when a query needs it.
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = augroup,
    command = "lua local m = package.loaded['acp.mcp.diagnostics'] if m then m.changed(tonumber(vim.fn.expand('<abuf>'))) end",
  })
  entries, dirty, complete = {}, {}, false
end

--- Marks buffer buf's diagnostics changed (what DiagnosticChanged does):
--- the next query reads them again.
---@param buf integer
function M.changed(buf)
  dirty[buf] = true
end

--- Forgets what is kept (and stops following changes): for tests and
--- benchmarks, the state right after every buffer's DiagnosticChanged.
function M.forget()
  if augroup then
    api.nvim_del_augroup_by_id(augroup)
    augroup = nil
  end
  entries, dirty, complete, normalized = {}, {}, false, {}
end

--- Buffer b's diagnostics, sorted.
---@return vim.Diagnostic[]
local function read(b)
  local ds = api.nvim_buf_is_valid(b) and vim.diagnostic.get(b) or {}
  sort(ds)
  return ds
end

--- The entry of buffer b, read again when it changed (nil: none).
---@return acp.mcp.DiagEntry?
local function entry(b)
  if dirty[b] or not entries[b] then
    dirty[b] = nil
    local ds = read(b)
    entries[b] = #ds > 0 and { ds = ds } or nil
  end
  return entries[b]
end

--- Every buffer's diagnostics, sorted, from one vim.diagnostic.get().
---@return table<integer, acp.mcp.DiagEntry>
local function read_all()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    local e = out[d.bufnr]
    if not e then
      e = { ds = {} }
      out[d.bufnr] = e
    end
    e.ds[#e.ds + 1] = d
  end
  for _, e in pairs(out) do
    sort(e.ds)
  end
  return out
end

--- Beyond this many buffers changed, all are read at once (one get()
--- costs about what a few per buffer cost).
local many = 8

--- Every buffer that has diagnostics, with its entry.
---@return table<integer, acp.mcp.DiagEntry>
local function all()
  if not complete then
    entries, dirty, complete = read_all(), {}, true
    return entries
  end
  local changed = vim.tbl_count(dirty)
  if changed > many then
    local fresh = read_all()
    for b in pairs(dirty) do
      entries[b] = fresh[b]
    end
    dirty = {}
  elseif changed > 0 then
    for b in pairs(dirty) do
      entry(b)
    end
  end
  return entries
end

--- The diagnostics asked, by buffer, each with its path: buffer path's,
--- or those of every buffer under prefix.
---@return table<integer, {path: string, e: acp.mcp.DiagEntry}>
local function groups(path, prefix)
  follow()
  local out = {}
  if path then
    local b = vim.fn.bufnr(path)
    -- bufnr() takes a pattern: check it is that file's buffer.
    if b > 0 and buf_path(b) == path then
      local e = entry(b)
      if e then
        out[b] = { path = path, e = e }
      end
    end
    return out
  end
  for b, e in pairs(all()) do
    if not api.nvim_buf_is_valid(b) then
      entries[b] = nil
    else
      local p = buf_path(b)
      if p ~= "" and (not prefix or p:sub(1, #prefix) == prefix) then
        out[b] = { path = p, e = e }
      end
    end
  end
  return out
end

--- The diagnostics of one file (args.path) or of the workspace's buffers
--- (under args.root), at least as severe as args.min_severity (1 error ...
--- 4 hint; 0 or nil: all), at most args.limit lines.
---@param args {path?: string, root?: string, min_severity?: integer, limit?: integer}
---@return {files: {path: string, text: string, n: integer}[], more: boolean}
function M.text(args)
  local root = args.root and args.root ~= "" and vim.fs.normalize(args.root) or nil
  local path = args.path and args.path ~= "" and vim.fs.normalize(args.path) or nil
  local prefix = root and (root:sub(-1) == "/" and root or root .. "/")
  local min = args.min_severity or 0
  local left = args.limit or math.huge
  local bufs = groups(path, prefix)
  local order = vim.tbl_keys(bufs)
  table.sort(order, function(x, y)
    return bufs[x].path < bufs[y].path
  end)
  local out = { files = {}, more = false }
  for _, b in ipairs(order) do
    local p, e = bufs[b].path, bufs[b].e
    local name = prefix and p:sub(1, #prefix) == prefix and p:sub(#prefix + 1) or p
    if e.name ~= name then
      -- Renamed since formatted: read again.
      e.lines, e.sevs = format(e.ds or read(b), name)
      e.name, e.text, e.ds = name, nil, nil
    end
    local lines = e.lines
    if min > 0 then
      lines = {}
      for i, l in ipairs(e.lines) do
        if e.sevs[i] <= min then
          lines[#lines + 1] = l
        end
      end
    end
    local n = #lines
    if n > 0 then
      if left == 0 then
        out.more = true
        break
      end
      local text
      if n > left then
        n, out.more = left, true
        text = table.concat(lines, "", 1, n)
      elseif min > 0 then
        text = table.concat(lines)
      else
        e.text = e.text or table.concat(lines)
        text = e.text
      end
      left = left - n
      out.files[#out.files + 1] = { path = p, text = text, n = n }
      if out.more then
        break
      end
    end
  end
  return out
end

return M
