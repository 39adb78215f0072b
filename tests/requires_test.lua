-- The require graph of lua/acp: requires at the top of files only, no
-- module requiring acp (the public API) for private functions, no cycles.
local M = {}

--- Module name -> { file, requires = { name... }, misplaced = { line... } }.
local function modules(root)
  local out = {}
  for _, file in ipairs(vim.fn.glob(root .. "/lua/acp/**/*.lua", false, true)) do
    -- lua/acp/render/doc.lua is acp.render.doc; an init.lua names its directory.
    local rel = file:sub(#root + #"/lua/" + 1):gsub("%.lua$", ""):gsub("/init$", "")
    local name = rel:gsub("/", ".")
    local mod = { file = file, requires = {}, misplaced = {} }
    local at_top = true
    for i, line in ipairs(vim.fn.readfile(file)) do
      -- The header: comments, blank lines, then `local x = require("acp.y")` lines.
      -- lazy("acp.y") (acp.lazy) is a require done on first use: an edge too.
      local req = line:match('^local [%w_]+ = require%("(acp[%w_.]*)"%)$')
        or line:match('^return require%("(acp[%w_.]*)"%)$')
        or line:match('^local [%w_]+ = lazy%("(acp[%w_.]*)"%)$')
      if req and at_top then
        table.insert(mod.requires, req)
      elseif not (line:match("^%-%-") or line:match("^%s*$")) then
        at_top = false
      end
      -- Any other require call (in a function body, or after code).
      local code = line:gsub("%-%-.*$", "")
      if code:find("require%s*%(") and not (req and at_top) then
        table.insert(mod.misplaced, ("%s:%d: %s"):format(vim.fn.fnamemodify(file, ":t"), i, vim.trim(line)))
      end
    end
    out[name] = mod
  end
  return out
end

M["every require is at the top of its file"] = function(t)
  local misplaced = {}
  for name, mod in pairs(modules(t.root)) do
    if name ~= "acp.lazy" then -- its job: the require done on first use
      vim.list_extend(misplaced, mod.misplaced)
    end
  end
  table.sort(misplaced)
  t.eq(misplaced, {}, "requires outside the header")
end

M["no module requires acp (the public API)"] = function(t)
  local bad = {}
  for name, mod in pairs(modules(t.root)) do
    if vim.tbl_contains(mod.requires, "acp") then
      bad[#bad + 1] = name
    end
  end
  t.eq(bad, {}, "modules requiring acp")
end

--- A cycle of the graph as "a -> b -> a", or nil.
local function find_cycle(mods)
  local state = {} -- nil: not seen, 1: on the path, 2: done
  local cycle
  local function visit(name, path)
    if state[name] == 2 or cycle then
      return
    end
    if state[name] == 1 then
      local from = vim.fn.index(path, name) + 1
      cycle = table.concat(vim.list_extend(vim.list_slice(path, from), { name }), " -> ")
      return
    end
    state[name] = 1
    path[#path + 1] = name
    for _, dep in ipairs(mods[name] and mods[name].requires or {}) do
      visit(dep, path)
    end
    path[#path] = nil
    state[name] = 2
  end
  local names = vim.tbl_keys(mods)
  table.sort(names)
  for _, name in ipairs(names) do
    visit(name, {})
  end
  return cycle
end

M["the require graph has no cycle"] = function(t)
  local mods = modules(t.root)
  for name, mod in pairs(mods) do
    for _, dep in ipairs(mod.requires) do
      t.ok(mods[dep], ("%s requires %s, which is no module of lua/acp"):format(name, dep))
    end
  end
  t.eq(find_cycle(mods), nil, "require cycle")
end

--- The folder of a module: "acp.chat.winbar" and "acp.chat" are in "chat";
--- the modules at the top of lua/acp (the shared base and the entry
--- modules) are in "" (the top).
local function folder(name, mods)
  local rel = name:gsub("^acp%.?", "")
  local first = rel:match("^([%w_]+)")
  if not first then
    return ""
  end
  local file = mods[name] and mods[name].file or ""
  if rel:find("%.") or file:match("/init%.lua$") then
    return first
  end
  return ""
end

--- The entry modules: the public API, the commands plugin/ defines, the
--- health check. Nothing in a folder requires them.
local entries = { ["acp"] = true, ["acp.api"] = true, ["acp.commands"] = true, ["acp.health"] = true }

--- Folder -> { folder -> "module -> dep" } for requires across folders.
local function folder_graph(mods)
  local graph = {}
  for name, mod in pairs(mods) do
    local from = folder(name, mods)
    graph[from] = graph[from] or {}
    for _, dep in ipairs(mod.requires) do
      local to = folder(dep, mods)
      if to ~= from then
        graph[from][to] = graph[from][to] or (name .. " -> " .. dep)
      end
    end
  end
  return graph
end

--- A cycle of the folder graph as "a -> b -> a" with the requires that make
--- it, or nil.
local function folder_cycle(graph)
  local as_mods = {}
  for from, tos in pairs(graph) do
    as_mods[from] = { requires = vim.tbl_keys(tos) }
    table.sort(as_mods[from].requires)
  end
  return find_cycle(as_mods)
end

M["the folders of lua/acp require each other without a cycle"] = function(t)
  local mods = modules(t.root)
  local graph = folder_graph(mods)
  -- The top is the shared base plus the entry modules: the entries may
  -- require any folder; the base requires none.
  local base_to_folder = {}
  for name, mod in pairs(mods) do
    if folder(name, mods) == "" and not entries[name] then
      for _, dep in ipairs(mod.requires) do
        if folder(dep, mods) ~= "" then
          base_to_folder[#base_to_folder + 1] = name .. " -> " .. dep
        end
      end
    end
  end
  table.sort(base_to_folder)
  t.eq(base_to_folder, {}, "base modules (top of lua/acp) requiring a folder")
  graph[""] = nil -- the entries' requires go down only, checked above for the base
  t.eq(folder_cycle(graph), nil, "folder cycle")
end

M["no folder requires an entry module"] = function(t)
  local mods = modules(t.root)
  local bad = {}
  for name, mod in pairs(mods) do
    if folder(name, mods) ~= "" then
      for _, dep in ipairs(mod.requires) do
        if entries[dep] then
          bad[#bad + 1] = name .. " -> " .. dep
        end
      end
    end
  end
  table.sort(bad)
  t.eq(bad, {}, "folder modules requiring an entry module")
end

M["the folder checks see a folder cycle and a base requiring a folder"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/acp/a", "p")
  vim.fn.mkdir(dir .. "/lua/acp/b", "p")
  vim.fn.writefile({ 'local x = require("acp.b.y")' }, dir .. "/lua/acp/a/init.lua")
  vim.fn.writefile({ 'local x = require("acp.a")' }, dir .. "/lua/acp/b/y.lua")
  vim.fn.writefile({ 'local x = require("acp.b.y")' }, dir .. "/lua/acp/base.lua")
  local mods = modules(dir)
  t.eq(folder("acp.a", mods), "a")
  t.eq(folder("acp.b.y", mods), "b")
  t.eq(folder("acp.base", mods), "")
  local graph = folder_graph(mods)
  t.eq(folder_cycle({ a = graph.a, b = graph.b }), "a -> b -> a")
  t.eq(graph[""], { b = "acp.base -> acp.b.y" })
end

M["setup() loads only what it needs: the API, the host's module, the options kept"] = function(t)
  local out = vim.fn.system({
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "--cmd",
    "set rtp^=" .. t.root,
    "-c",
    'lua require("acp").setup({}); local n = {}; for k in pairs(package.loaded) do if k:match("^acp") then n[#n + 1] = k end end; table.sort(n); io.stdout:write(table.concat(n, " "))',
    "-c",
    "qa!",
  })
  t.eq(vim.v.shell_error, 0, out)
  t.eq(vim.split(vim.trim(out), " "), { "acp", "acp.host", "acp.lazy", "acp.useropts" })
end

--- Runs lua code in a fresh Neovim with the plugin; its stdout.
local function fresh(t, code)
  local out = vim.fn.system({
    vim.v.progpath,
    "--headless",
    "-u",
    "NONE",
    "--cmd",
    "set rtp^=" .. t.root,
    "-c",
    "lua " .. code,
    "-c",
    "qa!",
  })
  t.eq(vim.v.shell_error, 0, out)
  return vim.trim(out)
end

M["setup()'s options are merged and checked when nvim-acp is first used"] = function(t)
  -- Good options are in force at first use, whoever loads the config.
  t.eq(
    fresh(
      t,
      [[require("acp").setup({ default_agent = "codex", chat = { width = 0.5 } })
      local o = require("acp.config").options
      io.stdout:write(o.default_agent .. " " .. o.chat.width)]]
    ),
    "codex 0.5"
  )
  -- A bad one: setup() returns, the first use reports it naming the option
  -- (acp.notify) and the defaults stay.
  t.eq(
    fresh(
      t,
      [[local said = {}
      vim.notify = function(msg) said[#said + 1] = msg end
      local ok = pcall(require("acp").setup, { chat = { widht = 1 } })
      local o = require("acp.config").options
      io.stdout:write(tostring(ok) .. "|" .. table.concat(said, ";") .. "|" .. tostring(o.chat.widht) .. "|" .. o.chat.width)]]
    ),
    'true|acp: setup: unknown option chat.widht (did you mean "width"?)|nil|'
      .. tostring(require("acp.config").defaults.chat.width)
  )
  -- Once in use, setup() checks at once and raises.
  t.eq(
    fresh(
      t,
      [[require("acp").setup({})
      require("acp.config")
      local ok, err = pcall(require("acp").setup, { zzz = 1 })
      io.stdout:write(tostring(ok) .. " " .. err)]]
    ),
    "false acp: setup: unknown option zzz"
  )
end

M["the first search of the saved chats loads no chat or session module"] = function(t)
  -- :AcpHistory /text in a fresh Neovim, its hits coming through the
  -- host's event path (the host stubbed: it answers and sends one chat).
  local out = fresh(
    t,
    [[require("acp").setup({})
    local host = require("acp.host")
    host.request = function() return true end
    host.channel = function() return nil end
    local search = require("acp.history.search")
    local req = assert(search.run("needle"))
    require("acp.session.events").dispatch({
      { type = "history_search", request = req, chat = { path = "/x.txt", meta = { id = "x", title = "t" }, hits = { { line = 1, text = "a needle" } } } },
    })
    assert(search.view().hits == 1, "hits: " .. search.view().hits)
    local n = {}
    for k in pairs(package.loaded) do
      if k:match("^acp%.chat") or k:match("^acp%.session%.") or k:match("^acp%.render") or k:match("^acp%.rewind") or k:match("^acp%.review") or k == "acp.session" then
        n[#n + 1] = k
      end
    end
    table.sort(n)
    io.stdout:write("loaded:" .. table.concat(n, " "))]]
  )
  t.eq(out, "loaded:acp.session.events")
end

M["the checks see a require in a function body and a cycle"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/acp", "p")
  vim.fn.writefile(
    { 'local a = require("acp.b")', "local function f()", '  return require("acp.c")', "end" },
    dir .. "/lua/acp/a.lua"
  )
  vim.fn.writefile({ 'local a = require("acp.a")' }, dir .. "/lua/acp/b.lua")
  local mods = modules(dir)
  t.eq(#mods["acp.a"].misplaced, 1, "misplaced requires found")
  t.eq(mods["acp.a"].requires, { "acp.b" })
  t.eq(find_cycle(mods), "acp.a -> acp.b -> acp.a")
end

return M
