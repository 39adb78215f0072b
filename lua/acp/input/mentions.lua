--- The editor's knowledge as @-mentions in a prompt (sent as context, the
--- user's side of the MCP tools, :help acp-mentions): @diagnostics and
--- @diagnostics:<file>, @symbol:<Name>, @quickfix, @diff and @diff:<file>,
--- @buffers, @terminal and @terminal:<id>, @selection, @chat:<title> (a
--- saved chat).
local diagnostics = require("acp.mcp.diagnostics")
local files = require("acp.files")
local history = require("acp.history")
local queries = require("acp.mcp.queries")
local terminal = require("acp.terminal")

local M = {}

local api = vim.api

--- Bounds of what one mention adds to a prompt.
M.max_bytes = 64 * 1024
M.max_items = 200
M.terminal_lines = 100
M.symbol_lines = 200
M.lsp_timeout_ms = 2000
--- What @chat: adds of a saved chat: whole up to this, else its start and
--- its end (acp.history.excerpt).
M.chat_bytes = 32 * 1024

--- The mention kinds, in completion order, with what each adds.
M.kinds = {
  { name = "diagnostics", arg = "file", info = "errors and warnings Neovim shows: the workspace's, or one file's" },
  { name = "symbol", arg = "symbol", info = "a symbol's definition, from the language server" },
  { name = "quickfix", info = "the quickfix list" },
  { name = "diff", arg = "file", info = "git diff of the workspace, or of one file" },
  { name = "buffers", info = "the open buffers: path, unsaved changes, cursor" },
  { name = "terminal", arg = "terminal", info = "a terminal's last output (the latest one by default)" },
  { name = "selection", info = "your last visual selection (or the cursor line)" },
  { name = "chat", arg = "title", info = "a saved chat, by its title: its text (start and end when long)" },
}

local by_name = {}
for _, k in ipairs(M.kinds) do
  by_name[k.name] = k
end

--- Whether word (after "@") is a mention rather than a file.
---@param word string
---@return boolean
function M.is_mention(word)
  local name, arg = word:match("^(%a+):?(.*)$")
  local k = name and by_name[name]
  return k ~= nil and (arg == "" or k.arg ~= nil)
end

--- text cut to M.max_bytes on a line boundary, saying so.
local function bound(text)
  if #text <= M.max_bytes then
    return text
  end
  local cut = text:sub(1, M.max_bytes)
  cut = cut:sub(1, (cut:match(".*()\n") or #cut))
  return cut .. "[... cut at " .. M.max_bytes .. " bytes]\n"
end

local function rel(path, cwd)
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

local make = {}

function make.diagnostics(arg, ctx)
  local path = arg ~= "" and vim.fn.fnamemodify(arg, ":p") or nil
  local label = path and ("diagnostics of " .. rel(path, ctx.cwd)) or "diagnostics"
  -- The lines the agent's diagnostics tool gets.
  local ds = diagnostics.text({ path = path, root = ctx.cwd, limit = M.max_items })
  local out = {}
  for _, f in ipairs(ds.files) do
    out[#out + 1] = f.text
  end
  if ds.more then
    out[#out + 1] = "[more diagnostics]\n"
  end
  if #out == 0 then
    out[1] = "no diagnostics\n"
  end
  return table.concat(out), label, path
end

function make.quickfix(_, ctx)
  local out = {}
  for i, it in ipairs(queries.run("quickfix", {})) do
    if i > M.max_items then
      out[#out + 1] = "[more entries]"
      break
    end
    local where = it.path and ("%s:%d:%d: "):format(rel(it.path, ctx.cwd), it.line or 0, it.col or 0) or ""
    out[#out + 1] = where .. (it.type and (it.type .. ": ") or "") .. (it.text:gsub("\n", " "))
  end
  if #out == 0 then
    out[1] = "the quickfix list is empty"
  end
  return table.concat(out, "\n") .. "\n"
end

function make.buffers(_, ctx)
  local out = {}
  for _, b in ipairs(queries.run("buffers", {})) do
    local notes = {}
    if b.current then
      notes[#notes + 1] = "current"
    end
    if b.modified then
      notes[#notes + 1] = "unsaved changes"
    end
    if b.line then
      notes[#notes + 1] = ("cursor %d:%d"):format(b.line, b.col)
    end
    notes[#notes + 1] = b.lines .. " lines"
    out[#out + 1] = ("%s (%s)"):format(rel(b.path, ctx.cwd), table.concat(notes, ", "))
  end
  if #out == 0 then
    out[1] = "no files are open"
  end
  return table.concat(out, "\n") .. "\n"
end

function make.selection(_, ctx)
  local sel = queries.run("selection", {})
  if not sel.path then
    return nil, "no file is open in the editing window"
  end
  local ft = vim.filetype.match({ filename = sel.path }) or ""
  return ("```%s %s:%d-%d\n%s```\n"):format(ft, rel(sel.path, ctx.cwd), sel.start_line, sel.end_line, sel.text),
    ("selection (%s:%d-%d)"):format(rel(sel.path, ctx.cwd), sel.start_line, sel.end_line),
    sel.path
end

function make.diff(arg, ctx)
  local cmd = { "git", "--no-pager", "diff", "--no-color", "--no-ext-diff" }
  local path = arg ~= "" and vim.fn.fnamemodify(arg, ":p") or nil
  if path then
    vim.list_extend(cmd, { "--", path })
  end
  local ok, res = pcall(function()
    return vim.system(cmd, { cwd = ctx.cwd, text = true }):wait(5000)
  end)
  if not ok then
    return nil, "git diff: " .. tostring(res)
  end
  if res.code ~= 0 then
    return nil, "git diff: " .. vim.trim(res.stderr or ("exit " .. res.code))
  end
  local label = path and ("diff of " .. rel(path, ctx.cwd)) or "diff"
  if res.stdout == "" then
    return "no changes (against git's index; unsaved buffers are not on disk yet)\n", label, path
  end
  return "```diff\n" .. bound(res.stdout) .. "```\n", label, path
end

function make.terminal(arg, ctx)
  local terms = ctx.terminals
  if not terms then
    return nil, "this session has no terminals"
  end
  local ids = terms:ids()
  local id = arg ~= "" and arg or ids[#ids]
  local t = id and terms:get(id)
  if not t then
    return nil, arg ~= "" and ("no terminal " .. arg) or "no terminal has run in this session"
  end
  terminal.drawn(t) -- all the output it got, not what was drawn so far
  local lines = terminal.tail(t, M.terminal_lines)
  return ("```\n$ %s\n%s\n```\n[%s]\n"):format(t.command or "", table.concat(lines, "\n"), terminal.status(t)),
    "terminal " .. id
end

--- A chat's title as a mention names it: no spaces (underscores), no
--- "@", no punctuation at the end (a sentence's), lower case.
---@param title string
---@return string
function M.chat_slug(title)
  local slug = tostring(title or ""):gsub("[%s@]+", "_"):gsub("[,.;:!?%)%]_]+$", ""):lower()
  return slug
end

--- The saved chat @chat:arg names: the title (as M.chat_slug has it) or
--- id equal to arg, else the newest whose title starts so; this
--- project's chats before the others'.
---@param arg string
---@param cwd string|nil
---@return acp.HistoryMeta|nil
function M.find_chat(arg, cwd)
  local want = M.chat_slug(arg)
  if want == "" then
    return nil
  end
  local here = history.list(history.project(cwd))
  local all = history.list(true)
  for _, list in ipairs({ here, all }) do
    for _, meta in ipairs(list) do
      if meta.id == arg or M.chat_slug(meta.title) == want then
        return meta
      end
    end
  end
  for _, list in ipairs({ here, all }) do
    for _, meta in ipairs(list) do
      if vim.startswith(M.chat_slug(meta.title), want) then
        return meta
      end
    end
  end
end

function make.chat(arg, ctx)
  if arg == "" then
    return nil, "@chat needs a saved chat's title: @chat:Title (completed with <C-x><C-o>)"
  end
  local meta = M.find_chat(arg, ctx.cwd)
  if not meta then
    return nil, ("no saved chat is titled %q (:AcpHistory lists them)"):format(arg)
  end
  local text, size, cut = history.excerpt(meta, M.chat_bytes)
  if not text then
    return nil, size
  end
  local label = ("chat %q (%s, %s, %s%s)"):format(
    meta.title or meta.id,
    meta.agent or "?",
    os.date("%Y-%m-%d", meta.updated or 0),
    cut and (files.size(M.chat_bytes) .. " of ") or "",
    files.size(size)
  )
  local head = ("A past chat of ours with %s, %q, saved %s%s:\n"):format(
    meta.agent or "an agent",
    meta.title or meta.id,
    os.date("%Y-%m-%d %H:%M", meta.updated or 0),
    cut and (" (its start and its end: " .. files.size(M.chat_bytes) .. " of " .. files.size(size) .. ")") or ""
  )
  return head .. "````markdown\n" .. text .. "\n````\n", label
end

--- The first client of the workspace that answers method.
local function client_for(method, cwd)
  for _, c in ipairs(vim.lsp.get_clients({ method = method })) do
    local root = c.root_dir and vim.fs.normalize(c.root_dir)
    if
      not root
      or not cwd
      or cwd == root
      or cwd:sub(1, #root + 1) == root .. "/"
      or root:sub(1, #cwd + 1) == cwd .. "/"
    then
      return c
    end
  end
end

local function request_sync(c, method, params, buf)
  if vim.fn.has("nvim-0.11") == 1 then
    return c:request_sync(method, params, M.lsp_timeout_ms, buf)
  end
  return c.request_sync(method, params, M.lsp_timeout_ms, buf)
end

--- Workspace symbols named like query (exact names first).
---@param query string
---@param cwd string|nil
---@return table[] SymbolInformation
function M.symbols(query, cwd)
  local c = client_for("workspace/symbol", cwd)
  if not c then
    return {}
  end
  local res = request_sync(c, "workspace/symbol", { query = query }, 0)
  local out = res and res.result or {}
  table.sort(out, function(a, b)
    return (a.name == query and 0 or 1) < (b.name == query and 0 or 1)
  end)
  return out
end

function make.symbol(arg, ctx)
  if arg == "" then
    return nil, "@symbol needs a name: @symbol:Name"
  end
  local syms = M.symbols(arg, ctx.cwd)
  local s = syms[1]
  if not s then
    return nil, ("no symbol %q (is a language server of the workspace running?)"):format(arg)
  end
  local path = vim.uri_to_fname(s.location.uri)
  local first = s.location.range and s.location.range.start.line or 0
  local last = first
  -- The whole definition: the file's own symbol of that name at that line.
  local buf = vim.fn.bufadd(path)
  pcall(vim.fn.bufload, buf)
  local c = client_for("textDocument/documentSymbol", ctx.cwd)
  if c and vim.lsp.buf_is_attached(buf, c.id) then
    local res = request_sync(c, "textDocument/documentSymbol", { textDocument = { uri = s.location.uri } }, buf)
    local function find(list)
      for _, d in ipairs(list or {}) do
        local r = d.range or (d.location and d.location.range)
        if d.name == s.name and r and r.start.line <= first and r["end"].line >= first then
          return r
        end
        local inner = find(d.children)
        if inner then
          return inner
        end
      end
    end
    local r = res and find(res.result)
    if r then
      first, last = r.start.line, r["end"].line
    end
  end
  last = math.min(last, first + M.symbol_lines - 1)
  local lines = api.nvim_buf_get_lines(buf, first, last + 1, false)
  local ft = vim.bo[buf].filetype
  return ("```%s %s:%d-%d\n%s\n```\n"):format(ft, rel(path, ctx.cwd), first + 1, last + 1, table.concat(lines, "\n")),
    ("symbol %s (%s:%d)"):format(s.name, rel(path, ctx.cwd), first + 1),
    path
end

--- The context block of mention word (after "@"), with its label and the
--- file it shows (nil: none, or the editor's state); nil and why when it
--- has nothing to add.
---@param word string e.g. "diagnostics", "symbol:Name"
---@param ctx { cwd: string|nil, terminals: acp.Terminals|nil }
---@return table|nil block, string label_or_err, string|nil path
function M.block(word, ctx)
  local name, arg = word:match("^(%a+):?(.*)$")
  local ok, text, label, path = pcall(make[name], arg, ctx)
  if not ok then
    return nil, ("@%s: %s"):format(word, text)
  end
  if not text then
    return nil, ("@%s: %s"):format(word, label)
  end
  label = label or word
  return { type = "text", text = ("@%s:\n%s"):format(word, bound(text)) }, label, path
end

--- Completion items for what was typed after "@" (mention kinds, symbol
--- names, terminal ids); for @symbol: with none, why.
---@param base string
---@param ctx { cwd: string|nil, terminals: acp.Terminals|nil }
---@return table[] items, string|nil why
function M.items(base, ctx)
  local out = {}
  local name, arg = base:match("^(%a+):(.*)$")
  if name == "symbol" then
    local seen = {}
    local why
    if not client_for("workspace/symbol", ctx.cwd) then
      why = "no language server of the workspace is running"
    elseif arg == "" then
      why = "type the start of a name: @symbol:Na"
    else
      for _, s in ipairs(M.symbols(arg, ctx.cwd)) do
        if not seen[s.name] and #out < 50 then
          seen[s.name] = true
          out[#out + 1] = { word = "symbol:" .. s.name, menu = vim.lsp.protocol.SymbolKind[s.kind] or "", kind = "sym" }
        end
      end
      why = ("the language server knows no symbol like %q"):format(arg)
    end
    return out, #out == 0 and why or nil
  elseif name == "terminal" and ctx.terminals then
    for _, id in ipairs(ctx.terminals:ids()) do
      local t = ctx.terminals:get(id)
      out[#out + 1] = { word = "terminal:" .. id, menu = t and t.command or "", kind = "term" }
    end
    return out
  elseif name == "chat" then
    local seen = {}
    local here = history.list(history.project(ctx.cwd))
    for _, list in ipairs({ here, history.list(true) }) do
      for _, meta in ipairs(list) do
        local slug = M.chat_slug(meta.title)
        if slug ~= "" and not seen[slug] and vim.startswith(slug, M.chat_slug(arg)) and #out < 50 then
          seen[slug] = true
          out[#out + 1] = {
            word = "chat:" .. slug,
            abbr = "chat:" .. vim.fn.strcharpart(slug, 0, 60),
            menu = ("%s %s"):format(meta.agent or "?", os.date("%Y-%m-%d", meta.updated or 0)),
            info = meta.title,
            kind = "chat",
          }
        end
      end
    end
    return out, #out == 0 and "no saved chat has a title like that" or nil
  elseif name == "diagnostics" or name == "diff" then
    for i, path in ipairs(vim.fn.getcompletion(arg, "file")) do
      if i > 200 then
        break
      end
      out[#out + 1] = { word = name .. ":" .. path, kind = "file" }
    end
    return out
  end
  for _, k in ipairs(M.kinds) do
    if vim.startswith(k.name, base) then
      -- @symbol needs its name; the others stand alone (":file" narrows).
      out[#out + 1] =
        { word = k.name .. (k.arg == "symbol" and ":" or ""), abbr = "@" .. k.name, menu = k.info, kind = "ctx" }
    end
  end
  return out
end

return M
