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
      local req = line:match('^local [%w_]+ = require%("(acp[%w_.]*)"%)$')
        or line:match('^return require%("(acp[%w_.]*)"%)$')
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
  for _, mod in pairs(modules(t.root)) do
    vim.list_extend(misplaced, mod.misplaced)
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
