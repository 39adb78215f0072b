-- README's lazy.nvim snippet loads the plugin for every command it defines
-- and maps only keys that exist.
local M = {}

--- The Lua table of README's lazy.nvim spec (the first ```lua block under ## Install).
local function lazy_spec(root)
  local text = table.concat(vim.fn.readfile(root .. "/README.md"), "\n")
  local install = text:match("\n## Install\n(.-)\n## ")
  assert(install, "no ## Install section in README.md")
  local code = install:match("```lua\n(.-)\n```")
  assert(code, "no lua block under ## Install")
  return assert(loadstring("return " .. code, "README.md"))()
end

--- The commands plugin/acp.lua defines.
local function commands(root)
  local out = {}
  for _, l in ipairs(vim.fn.readfile(root .. "/plugin/acp.lua")) do
    local name = l:match('^cmd%("(%w+)"')
    if name then
      out[#out + 1] = name
    end
  end
  table.sort(out)
  return out
end

M["README's lazy.nvim spec lazy-loads on every command"] = function(t)
  local spec = lazy_spec(t.root)
  local listed = vim.list_slice(spec.cmd)
  table.sort(listed)
  t.eq(listed, commands(t.root))
  t.eq(spec.build, "make")
end

M["README's keys map commands and <Plug> maps that exist"] = function(t)
  local spec = lazy_spec(t.root)
  t.ok(#spec.keys > 0, "a keys = {...} block")
  local cmds = {}
  for _, c in ipairs(commands(t.root)) do
    cmds[c] = true
  end
  local plugin = table.concat(vim.fn.readfile(t.root .. "/plugin/acp.lua"), "\n")
  for _, k in ipairs(spec.keys) do
    local rhs = k[2]
    local plug = rhs:match("^<Plug>%((%w+)%)$")
    local cmd = rhs:match("^<cmd>(%w+)<cr>$") or rhs:match("^:(%w+)<cr>$")
    if plug then
      t.ok(plugin:find("<Plug>(" .. plug .. ")", 1, true), "no <Plug>(" .. plug .. ") in plugin/acp.lua")
    else
      t.ok(cmd and cmds[cmd], "key " .. k[1] .. " runs an unknown command: " .. rhs)
    end
    t.ok(type(k.desc) == "string", "key " .. k[1] .. " has a desc")
  end
end

return M
