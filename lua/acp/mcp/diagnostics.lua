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
---@param ds vim.Diagnostic[] the buffer's diagnostics (sorted here)
---@param name string the path as the lines show it
---@return string[] lines, integer[] severities
local function format(ds, name)
  sort(ds)
  local lines, sevs = {}, {}
  local head = name .. ":"
  for i, d in ipairs(ds) do
    local sev = d.severity or 1
    local src, code = d.source, d.code
    local tail = "\n"
    if (src and src ~= "") or code then
      local t = (src or "") .. " " .. (code and tostring(code) or "")
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

--- The path of buffer buf, normalized ("" when it has none).
local function buf_path(buf)
  local name = api.nvim_buf_get_name(buf)
  return name == "" and "" or vim.fs.normalize(name)
end

--- The diagnostics asked, by buffer, each with its path: buffer path's,
--- or those of every buffer under prefix.
---@return table<integer, {path: string, ds: vim.Diagnostic[]}>
local function groups(path, prefix)
  local out = {}
  if path then
    local b = vim.fn.bufnr(path)
    -- bufnr() takes a pattern: check it is that file's buffer.
    if b > 0 and buf_path(b) == path then
      out[b] = { path = path, ds = vim.diagnostic.get(b) }
    end
    return out
  end
  local skip = {}
  for _, d in ipairs(vim.diagnostic.get()) do
    local b = d.bufnr
    local g = out[b]
    if not g and not skip[b] then
      local p = api.nvim_buf_is_valid(b) and buf_path(b) or ""
      if p ~= "" and (not prefix or p:sub(1, #prefix) == prefix) then
        g = { path = p, ds = {} }
        out[b] = g
      else
        skip[b] = true
      end
    end
    if g then
      g.ds[#g.ds + 1] = d
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
    local p = bufs[b].path
    local name = prefix and p:sub(1, #prefix) == prefix and p:sub(#prefix + 1) or p
    local lines, sevs = format(bufs[b].ds, name)
    if min > 0 then
      local kept = {}
      for i, l in ipairs(lines) do
        if sevs[i] <= min then
          kept[#kept + 1] = l
        end
      end
      lines = kept
    end
    local n = #lines
    if n > 0 then
      if left == 0 then
        out.more = true
        break
      end
      if n > left then
        n, out.more = left, true
      end
      left = left - n
      out.files[#out.files + 1] = { path = p, text = table.concat(lines, "", 1, n), n = n }
      if out.more then
        break
      end
    end
  end
  return out
end

return M
