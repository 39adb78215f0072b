-- README: what a user looks for first (the two commands, install, agents,
-- keys, then the tour), a table of contents that leads somewhere, a
-- lazy.nvim snippet that loads the plugin for every command it defines and
-- maps only keys that exist, and a key table of keys the plugin has.
local config = require("acp.config")
local M = {}

local function readme(root)
  return table.concat(vim.fn.readfile(root .. "/README.md"), "\n")
end

--- The README's lines outside code blocks.
local function prose(root)
  local out, fence = {}, false
  for _, l in ipairs(vim.fn.readfile(root .. "/README.md")) do
    if l:match("^```") then
      fence = not fence
    elseif not fence then
      out[#out + 1] = l
    end
  end
  return out
end

--- The Lua table of README's lazy.nvim spec (the first ```lua block under ## Install).
local function lazy_spec(root)
  local install = readme(root):match("\n## Install\n(.-)\n## ")
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

--- GitHub's anchor of a heading.
local function anchor(title)
  return (title:lower():gsub("[^%w%- ]", ""):gsub(" ", "-"))
end

M["README's lazy.nvim spec lazy-loads on every command and installs with build.lua"] = function(t)
  local spec = lazy_spec(t.root)
  local listed = vim.list_slice(spec.cmd)
  table.sort(listed)
  t.eq(listed, commands(t.root))
  t.eq(spec.build, "build.lua")
  t.ok(vim.uv.fs_stat(t.root .. "/" .. spec.build), "no " .. spec.build)
  t.eq(spec.version, "*", "releases (build.lua fetches the binary of the release checked out)")
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

M["README starts with the commands, install, agents and keys, then the tour"] = function(t)
  local headings = {}
  for _, l in ipairs(prose(t.root)) do
    local h = l:match("^## (.+)$")
    if h then
      headings[#headings + 1] = h
    end
  end
  t.eq(vim.list_slice(headings, 1, 5), { "Try it", "Install", "Add your agent", "Keys", "A tour" })
  -- What it is fits in the three lines under the title.
  local lines = prose(t.root)
  t.eq(lines[1], "# nvim-acp")
  t.eq(lines[2], "")
  t.ok(lines[3] ~= "" and lines[4] ~= "" and lines[5] ~= "" and lines[6] == "", "three lines of what it is")
end

M["README's table of contents leads to every section"] = function(t)
  local text = table.concat(prose(t.root), "\n")
  local anchors, linked = {}, {}
  for _, l in ipairs(prose(t.root)) do
    local h = l:match("^##+ (.+)$")
    if h then
      anchors[anchor(h)] = h
    end
  end
  local toc = text:match("\n(%- %[Try it%].-)\n\n")
  t.ok(toc, "a table of contents (a list starting with [Try it]) under the title")
  for target in toc:gmatch("%]%(#([^)]+)%)") do
    t.ok(anchors[target], "the contents link to #" .. target .. ", which no heading has")
    linked[target] = true
  end
  for _, l in ipairs(prose(t.root)) do
    local h = l:match("^## (.+)$")
    if h then
      t.ok(linked[anchor(h)], "the contents do not list ## " .. h)
    end
  end
end

M["README says what make test installs system-wide, next to the command"] = function(t)
  local try = readme(t.root):match("\n## Try it\n(.-)\n## ")
  t.ok(try, "a ## Try it section")
  local cmd = try:match("\nmake test[^\n]*")
  t.ok(cmd and cmd:find("system-wide", 1, true), "the make test line says it installs system-wide: " .. tostring(cmd))
  for _, want in ipairs({ "bubblewrap", "openssh-server", "root", "~/.cache/nvim-acp/", "It took " }) do
    t.ok(try:find(want, 1, true), "## Try it does not say " .. want)
  end
end

M["README's key table has the plugin's default keys"] = function(t)
  local section = readme(t.root):match("\n## Keys\n(.-)\n## ")
  t.ok(section, "a ## Keys section")
  local known = { ["<C-x><C-o>"] = true } -- Neovim's omni completion, the input's omnifunc
  local function add(v)
    if type(v) == "table" then
      for _, x in pairs(v) do
        add(x)
      end
    elseif type(v) == "string" then
      known[v] = true
    end
  end
  add(config.defaults.keymaps)
  local rows = 0
  for line in section:gmatch("[^\n]+") do
    local keys = line:match("^| [^|]+ | ([^|]+) |")
    if keys and not keys:match("^%-%-%-") and keys ~= "key " then
      rows = rows + 1
      for k in keys:gmatch("`([^`]+)`") do
        t.ok(known[k], ("README's key table has %s, which is no default key"):format(k))
      end
    end
  end
  t.ok(rows >= 20, "a key table (" .. rows .. " rows)")
end

return M
