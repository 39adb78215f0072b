--- Warm sessions: with `chat.warm_sessions` set, each agent used once keeps
--- that many sessions started aside (its process and a session/new
--- answered), so the next new chat with it opens at once. They are not
--- listed nor saved; one that fails is dropped and replaced the next time.
local config = require("acp.config")
local session = require("acp.session")

local M = {}

local pool = {} ---@type table<string, acp.Session[]> by agent

--- The warm sessions of agent still usable (dropping the others).
local function live(agent)
  local out = {}
  for _, s in ipairs(pool[agent] or {}) do
    if s.warm and s:alive() then
      out[#out + 1] = s
    end
  end
  pool[agent] = out
  return out
end

--- Start warm sessions of agent up to the bound, each with start(s).
---@param agent string
---@param start fun(s: acp.Session)
function M.fill(agent, start)
  local want = config.options.chat.warm_sessions or 0
  while want > 0 and #live(agent) < want do
    local s = session.new(agent, { warm = true })
    table.insert(pool[agent], s)
    start(s)
  end
end

--- A warm session of agent, adopted (listed, current, shown), if one is
--- ready or starting; the pool is filled again with start.
---@param agent string
---@param start fun(s: acp.Session)
---@return acp.Session|nil
function M.take(agent, start)
  local list = live(agent)
  local s = table.remove(list, 1)
  if not s then
    return nil
  end
  session.adopt(s)
  vim.schedule(function()
    M.fill(agent, start)
  end)
  return s
end

--- How many warm sessions agent has (tests, :checkhealth).
---@param agent string
---@return integer
function M.count(agent)
  return #live(agent)
end

--- Stop every warm session (the options changed, or on demand).
function M.clear()
  for agent, list in pairs(pool) do
    for _, s in ipairs(list) do
      if s.warm then
        s:stop()
      end
    end
    pool[agent] = nil
  end
end

return M
