--- What the editor's MCP tools ask Neovim (editormcp.LuaQueries in the
--- host): language server queries, buffers, the selection, the quickfix
--- list (diagnostics: acp.mcp.diagnostics). query(name, args_json, id)
--- answers JSON at once:
--- { result = ... } or { error = "..." }, or { pending = true } and later
--- the same through the host's acp_mcp_reply(id, json) (language server
--- requests: Neovim never waits on them).
local chat = require("acp.chat")
local config = require("acp.config")
local files = require("acp.files")
local host = require("acp.host")

local M = {}

local api = vim.api
local new_api = vim.fn.has("nvim-0.11") == 1

--- How long a query waits for a language server to attach to a buffer.
M.attach_ms = 10000

local function encode(t)
  return vim.json.encode(t)
end

--- The path of buffer buf ("" when it has none).
local function buf_path(buf)
  local name = api.nvim_buf_get_name(buf)
  if name == "" then
    return ""
  end
  return vim.fs.normalize(name)
end

--- Whether path is root or under it (root normalized).
local function under(path, root)
  if root == nil or root == "" then
    return true
  end
  root = vim.fs.normalize(root)
  return path == root or path:sub(1, #root + 1) == root .. "/"
end

--- A buffer that is an editor's: a file, not the chat or a terminal.
local function file_buf(buf)
  return api.nvim_buf_is_valid(buf)
    and vim.bo[buf].buftype == ""
    and vim.b[buf].acp_role == nil
    and api.nvim_buf_get_name(buf) ~= ""
end

--- The buffer of path, loaded (a hidden, unlisted one when the user has
--- none; the user's config attaches its language servers to it as to any).
--- The host checked path as it checks reads (fsbridge CheckLoad: a regular
--- file within fs.max_bytes); the same check runs again here, and the load
--- is guarded, for a FIFO or a huge file swapped in since: Neovim blocks
--- in open(2) on a FIFO for good, and loads a file whole.
local function load_buf(path)
  local buf = vim.fn.bufnr(path)
  if buf > 0 and api.nvim_buf_is_loaded(buf) then
    return buf
  end
  local why = files.check_regular(path, config.options.fs.max_bytes)
  if why then
    return nil, why
  end
  buf = vim.fn.bufadd(path)
  local released, ok, err = files.open_guarded(path, function()
    return pcall(vim.fn.bufload, buf)
  end)
  if released then
    -- A FIFO was there when Neovim opened it: what was loaded is not a
    -- file's text.
    pcall(api.nvim_buf_delete, buf, { force = true })
    return nil, ("%s became a FIFO while it was loaded: not a regular file, not read"):format(path)
  end
  if not ok then
    return nil, ("cannot load %s: %s"):format(path, err)
  end
  return buf
end

-- Queries answered at once ------------------------------------------------

local q = {}

--- The editing window of the current tab (the one the user last edited in).
local function edit_win()
  return chat.edit_win()
end

function q.buffers()
  local cur = edit_win()
  local wins = {}
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_config(w).relative == "" then
      local b = api.nvim_win_get_buf(w)
      if not wins[b] or w == cur then
        wins[b] = w
      end
    end
  end
  local out = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    if vim.bo[b].buflisted and file_buf(b) then
      local item = {
        path = buf_path(b),
        modified = vim.bo[b].modified,
        lines = api.nvim_buf_line_count(b),
        filetype = vim.bo[b].filetype ~= "" and vim.bo[b].filetype or nil,
      }
      local w = wins[b]
      if w then
        local pos = api.nvim_win_get_cursor(w)
        item.line, item.col = pos[1], pos[2] + 1
        item.top = vim.fn.line("w0", w)
        item.bottom = vim.fn.line("w$", w)
        item.current = w == cur or nil
      end
      out[#out + 1] = item
    end
  end
  return out
end

--- The last visual selection of the editing window's buffer ('< and '>),
--- or its cursor line.
function q.selection()
  local win = edit_win()
  local buf = api.nvim_win_get_buf(win)
  if not file_buf(buf) then
    return vim.empty_dict()
  end
  local s, e = api.nvim_buf_get_mark(buf, "<"), api.nvim_buf_get_mark(buf, ">")
  local out = { path = buf_path(buf) }
  if s[1] > 0 and e[1] >= s[1] then
    local mode = vim.fn.visualmode()
    local lines
    if mode == "V" or mode == "" or mode == "\22" then
      lines = api.nvim_buf_get_lines(buf, s[1] - 1, e[1], false)
    else
      local last = api.nvim_buf_get_lines(buf, e[1] - 1, e[1], false)[1] or ""
      local ecol = math.min(e[2] + 1, #last)
      -- Include the whole last character (it may be several bytes).
      ecol = ecol + (vim.str_utf_end and vim.str_utf_end(last, ecol) or 0)
      lines = api.nvim_buf_get_text(buf, s[1] - 1, s[2], e[1] - 1, ecol, {})
    end
    out.start_line, out.end_line, out.visual = s[1], e[1], true
    out.text = table.concat(lines, "\n") .. "\n"
  else
    local l = api.nvim_win_get_cursor(win)[1]
    out.start_line, out.end_line, out.visual = l, l, false
    out.text = (api.nvim_buf_get_lines(buf, l - 1, l, false)[1] or "") .. "\n"
  end
  return out
end

function q.quickfix()
  local out = {}
  for _, it in ipairs(vim.fn.getqflist()) do
    local path = it.bufnr > 0 and buf_path(it.bufnr) or nil
    out[#out + 1] = {
      path = path ~= "" and path or nil,
      line = it.lnum > 0 and it.lnum or nil,
      col = it.col > 0 and it.col or nil,
      type = it.type ~= "" and it.type or nil,
      text = it.text,
    }
  end
  return out
end

-- Language servers ---------------------------------------------------------

--- LSP character of 0-based byte index b of line, in encoding enc.
local function char_of(line, b, enc)
  b = math.min(b, #line)
  if enc == "utf-8" then
    return b
  end
  if new_api then
    return vim.str_utfindex(line, enc, b, false)
  end
  local ok, u32, u16 = pcall(vim.str_utfindex, line, b)
  if not ok then
    return b
  end
  return enc == "utf-16" and u16 or u32
end

--- 0-based byte index of LSP character c of line, in encoding enc.
local function byte_of(line, c, enc)
  if enc == "utf-8" then
    return math.min(c, #line)
  end
  local ok, b
  if new_api then
    ok, b = pcall(vim.str_byteindex, line, enc, c, false)
  else
    ok, b = pcall(vim.str_byteindex, line, c, enc == "utf-16")
  end
  return ok and b or #line
end

--- Line n (1-based) of path: from its buffer when loaded, else the disk,
--- read as the plugin reads any file (files.read_regular: a regular file
--- within fs.max_bytes, never blocking on a FIFO); "" when it cannot be.
--- A file's lines are kept until the answer is sent (line_cache = {}).
local line_cache = {}
local function line_of(path, n)
  local b = vim.fn.bufnr(path)
  if b > 0 and api.nvim_buf_is_loaded(b) and buf_path(b) == path then
    return api.nvim_buf_get_lines(b, n - 1, n, false)[1] or ""
  end
  local lines = line_cache[path]
  if lines == nil then
    local data = files.read_regular(path, config.options.fs.max_bytes)
    lines = data and vim.split(data, "\n", { plain = true }) or false
    line_cache[path] = lines
  end
  return lines and (lines[n] or ""):gsub("\r$", "") or ""
end

--- {path, line, col (1-based characters), text} of an LSP position.
local function location(uri, pos, enc)
  local path = vim.fs.normalize(vim.uri_to_fname(uri))
  local line = line_of(path, pos.line + 1)
  local b = byte_of(line, pos.character, enc)
  return { path = path, line = pos.line + 1, col = vim.fn.strchars(line:sub(1, b)) + 1, text = line }
end

local function request(client, method, params, handler, buf)
  if new_api then
    return client:request(method, params, handler, buf)
  end
  return client.request(method, params, handler, buf)
end

--- Whether client c supports method.
local function supports(c, method)
  if new_api then
    return c:supports_method(method)
  end
  return c.supports_method(method)
end

--- Run fn(client) once a client attached to buf supports method and is
--- initialized, or fail(why) after M.attach_ms.
local function with_client(buf, method, fn, fail)
  local waited = 0
  local function try()
    for _, c in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
      if c.initialized ~= false and supports(c, method) then
        return fn(c)
      end
    end
    if waited >= M.attach_ms then
      local names = vim.tbl_map(function(c)
        return c.name
      end, vim.lsp.get_clients({ bufnr = buf }))
      return fail(
        #names == 0
            and ("no language server is attached to %s (nvim-acp waited %d ms; the user's config starts them)"):format(
              buf_path(buf),
              M.attach_ms
            )
          or ("the language servers of %s (%s) do not answer %s"):format(
            buf_path(buf),
            table.concat(names, ", "),
            method
          )
      )
    end
    waited = waited + 50
    vim.defer_fn(try, 50)
  end
  try()
end

--- The LSP position of args (path, line, column or symbol) in buf, for
--- encoding enc; nil and why when there is none.
local function position(buf, args, enc)
  local line = api.nvim_buf_get_lines(buf, args.line - 1, args.line, false)[1]
  if not line then
    return nil, ("line %d is past the end of %s (%d lines)"):format(args.line, args.path, api.nvim_buf_line_count(buf))
  end
  local b
  if args.symbol and args.symbol ~= "" then
    local s = line:find(args.symbol, 1, true)
    if not s then
      return nil, ("%q is not on line %d of %s: %s"):format(args.symbol, args.line, args.path, vim.trim(line))
    end
    b = s - 1
  else
    b = vim.fn.byteidx(line, args.column - 1)
    if b < 0 then
      b = #line
    end
  end
  return { line = args.line - 1, character = char_of(line, b, enc) }
end

local kinds = vim.lsp.protocol.SymbolKind

--- Flatten DocumentSymbol[] or SymbolInformation[] into out.
local function flatten(list, uri, enc, container, out, limit)
  for _, s in ipairs(list or {}) do
    if #out >= limit then
      return
    end
    local loc = s.location
    local item = location(
      loc and loc.uri or uri,
      (s.selectionRange or (loc and loc.range) or s.range or {}).start or { line = 0, character = 0 },
      enc
    )
    out[#out + 1] = {
      name = s.name,
      kind = kinds[s.kind] or tostring(s.kind),
      path = item.path,
      line = item.line,
      col = item.col,
      container = s.containerName or container,
    }
    if s.children then
      flatten(s.children, uri, enc, s.name, out, limit)
    end
  end
end

--- Locations of a definition/references result (Location, Location[],
--- LocationLink[]).
local function locations(result, enc, limit)
  if result == nil then
    return {}
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  local out = {}
  for _, l in ipairs(result) do
    if #out >= limit then
      break
    end
    local uri = l.uri or l.targetUri
    local range = l.range or l.targetSelectionRange or l.targetRange
    if uri and range then
      out[#out + 1] = location(uri, range.start, enc)
    end
  end
  return out
end

local async = {}

--- Send method about args' position (or document) and reply with
--- convert(result, client).
local function buffer_request(args, method, params_of, convert, reply)
  local buf, err = load_buf(args.path)
  if not buf then
    return reply({ error = err })
  end
  with_client(buf, method, function(client)
    local enc = client.offset_encoding or "utf-16"
    local params, perr = params_of(buf, enc)
    if not params then
      return reply({ error = perr })
    end
    params.textDocument = { uri = vim.uri_from_bufnr(buf) }
    local ok = request(client, method, params, function(rerr, result)
      if rerr then
        return reply({ error = ("%s: %s"):format(client.name, rerr.message or vim.inspect(rerr)) })
      end
      local cok, out = pcall(convert, result, enc, vim.uri_from_bufnr(buf))
      line_cache = {}
      reply(
        cok and { result = out } or { error = "cannot read the answer of " .. client.name .. ": " .. tostring(out) }
      )
    end, buf)
    if not ok then
      reply({ error = client.name .. " did not take the request " .. method })
    end
  end, function(why)
    reply({ error = why })
  end)
end

function async.definition(args, reply)
  buffer_request(args, "textDocument/definition", function(buf, enc)
    local p, err = position(buf, args, enc)
    return p and { position = p } or nil, err
  end, function(result, enc)
    return locations(result, enc, args.limit)
  end, reply)
end

function async.references(args, reply)
  buffer_request(args, "textDocument/references", function(buf, enc)
    local p, err = position(buf, args, enc)
    return p and { position = p, context = { includeDeclaration = true } } or nil, err
  end, function(result, enc)
    return locations(result, enc, args.limit)
  end, reply)
end

function async.hover(args, reply)
  buffer_request(args, "textDocument/hover", function(buf, enc)
    local p, err = position(buf, args, enc)
    return p and { position = p } or nil, err
  end, function(result)
    if not result or not result.contents then
      return ""
    end
    local lines = vim.lsp.util.convert_input_to_markdown_lines(result.contents)
    return vim.trim(table.concat(lines, "\n"))
  end, reply)
end

--- A file's symbols (args.path), or the workspace's matching args.query.
function async.symbols(args, reply)
  if args.path then
    return buffer_request(args, "textDocument/documentSymbol", function()
      return {}
    end, function(result, enc, uri)
      local out = {}
      flatten(result, uri, enc, nil, out, args.limit)
      return out
    end, reply)
  end
  -- Any client of the workspace that answers workspace/symbol; one still
  -- starting (a file just opened) is waited for, up to M.attach_ms.
  local waited = 0
  local function try()
    local client, starting
    -- _uninitialized (0.10 and newer): clients still starting are listed too.
    for _, c in ipairs(vim.lsp.get_clients({ _uninitialized = true })) do
      if c.root_dir == nil or under(vim.fs.normalize(c.root_dir), args.root) or under(args.root, c.root_dir) then
        if not c.initialized then
          starting = true
        elseif supports(c, "workspace/symbol") then
          client = c
          break
        end
      end
    end
    if not client and starting and waited < M.attach_ms then
      waited = waited + 50
      return vim.defer_fn(try, 50)
    end
    if not client then
      return reply({ error = "no language server of the workspace is running (open one of its files, or give a path)" })
    end
    local enc = client.offset_encoding or "utf-16"
    request(client, "workspace/symbol", { query = args.query or "" }, function(err, result)
      if err then
        return reply({ error = ("%s: %s"):format(client.name, err.message or vim.inspect(err)) })
      end
      local out = {}
      local ok, perr = pcall(flatten, result, nil, enc, nil, out, args.limit)
      line_cache = {}
      reply(ok and { result = out } or { error = tostring(perr) })
    end)
  end
  try()
end

--- Run query name (one answered at once: diagnostics, buffers, selection,
--- quickfix) with args and return its result.
---@param name string
---@param args table
---@return table
function M.run(name, args)
  return q[name](args)
end

--- Answer query name (args as JSON) now, or later through acp_mcp_reply(id).
---@param name string
---@param args_json string
---@param id integer
---@return string JSON
function M.query(name, args_json, id)
  local ok, args = pcall(vim.json.decode, args_json, { luanil = { object = true, array = true } })
  if not ok or type(args) ~= "table" then
    return encode({ error = "bad arguments" })
  end
  if q[name] then
    local qok, res = pcall(q[name], args)
    if not qok then
      return encode({ error = tostring(res) })
    end
    return encode({ result = res })
  end
  if not async[name] then
    return encode({ error = "unknown query " .. name })
  end
  local answered, now = false, nil
  local function reply(answer)
    if answered then
      return
    end
    answered = true
    local text = encode(answer)
    if now == false then
      pcall(host.notify, "acp_mcp_reply", id, text)
    else
      now = text
    end
  end
  local aok, err = pcall(async[name], args, reply)
  if not aok then
    reply({ error = tostring(err) })
  end
  if now then -- answered before returning
    return now
  end
  now = false
  return encode({ pending = true })
end

return M
