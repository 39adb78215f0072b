-- One owner per session field: each module writes only the acp.Session
-- fields it owns. A field's owner is named in its declaration on the class
-- (`---@field name type (acp.module) what it is`), acp.session when none is.
local M = {}

--- The fields of acp.Session: name -> owning module.
local function declared(root)
  local owners = {}
  local in_class = false
  for _, line in ipairs(vim.fn.readfile(root .. "/lua/acp/session/init.lua")) do
    if line:match("^%-%-%-@class acp%.Session") then
      in_class = true
    elseif in_class then
      local name, rest = line:match("^%-%-%-@field ([%w_]+) %S+ ?(.*)$")
      if not name then
        break
      end
      owners[name] = rest:match("^%((acp[%w_.]*)%)") or "acp.session"
    end
  end
  return owners
end

--- Every write of a session field in lua/acp: { module, field, where }.
--- A session is `s` everywhere (the plugin's naming rule), and `self` in
--- acp.session, whose methods are the class's.
local function writes(root)
  local out = {}
  for _, file in ipairs(vim.fn.glob(root .. "/lua/acp/**/*.lua", false, true)) do
    local rel = file:sub(#root + #"/lua/" + 1):gsub("%.lua$", ""):gsub("/init$", "")
    local module = rel:gsub("/", ".")
    local vars = module == "acp.session" and { "s", "self" } or { "s" }
    for i, line in ipairs(vim.fn.readfile(file)) do
      for code in (line:gsub("%-%-.*$", "")):gmatch("[^;]+") do
        -- The targets of an assignment: what is left of a single `=`.
        local lhs = code:match("^%s*(.-[^=~<>])=[^=]")
        if lhs and not lhs:match("^%s*local%s") then
          for target in lhs:gmatch("[^,]+") do
            for _, v in ipairs(vars) do
              local field = vim.trim(target):match("^" .. v .. "%.([%w_]+)$")
              if field then
                out[#out + 1] = { module = module, field = field, where = ("%s:%d"):format(rel, i) }
              end
            end
          end
        end
      end
    end
  end
  return out
end

M["each module writes only the session fields it owns, all declared"] = function(t)
  local owners = declared(t.root)
  t.ok(owners.state == "acp.session" and owners.chat_buf == "acp.chat", "the class's fields are read")
  local bad = {}
  for _, w in ipairs(writes(t.root)) do
    local owner = owners[w.field]
    if not owner then
      bad[#bad + 1] = ("%s writes s.%s, which acp.Session does not declare"):format(w.where, w.field)
    elseif owner ~= w.module then
      bad[#bad + 1] = ("%s writes s.%s, which %s owns"):format(w.where, w.field, owner)
    end
  end
  table.sort(bad)
  t.eq(bad, {}, "session fields written by another module than their owner")
end

M["the owner check sees a write by another module and an undeclared field"] = function(t)
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir .. "/lua/acp/session", "p")
  vim.fn.mkdir(dir .. "/lua/acp/chat", "p")
  vim.fn.writefile({
    "---@class acp.Session",
    "---@field state string the state",
    "---@field chat_buf integer (acp.chat) the buffer",
    "local S = {}",
    "function S:x()",
    "  self.state, self.chat_buf = 1, 2",
    "end",
  }, dir .. "/lua/acp/session/init.lua")
  vim.fn.writefile(
    { "local function f(s)", "  s.chat_buf = 1; s.state = 2", "end", "s.extra = s.extra == 1" },
    dir .. "/lua/acp/chat/init.lua"
  )
  local got = {}
  for _, w in ipairs(writes(dir)) do
    got[#got + 1] = w.module .. " " .. w.field
  end
  table.sort(got)
  t.eq(got, { "acp.chat chat_buf", "acp.chat extra", "acp.chat state", "acp.session chat_buf", "acp.session state" })
  t.eq(declared(dir), { state = "acp.session", chat_buf = "acp.chat" })
end

return M
